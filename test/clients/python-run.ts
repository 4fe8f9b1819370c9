// Runs the Python client's code from a test: Debian's python3 (where python3-httpx and python3-pytest install), in a
// process group of its own that is stopped on every path; fails naming the packages to install when it cannot import
// them (CI installs them: no skipping).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { spawnChild, stopChild } from '../helpers/child-processes.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CLIENT_DIR = path.join(ROOT, 'clients/python');

/**
 * OCT_PYTHON when set; else Debian's /usr/bin/python3 (a `python3` earlier on the PATH, such as pyenv's, lacks the
 * apt packages); else whatever `python3` is.
 */
export const PYTHON = process.env.OCT_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

export interface PythonRun {
  code: number | string;
  stdout: string;
  stderr: string;
}

/** Runs `PYTHON args` in the repository's root with `env` added, `input` on stdin; stopped after `timeoutMs`. */
export async function runPython(
  args: string[],
  options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {},
): Promise<PythonRun> {
  const child = spawnChild(PYTHON, args, {
    cwd: ROOT,
    // No __pycache__ or .pytest_cache left in the work tree.
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: CLIENT_DIR, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | string>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
  });
  child.stdin!.end(options.input ?? '');
  const timer = setTimeout(() => void stopChild(child, 'SIGKILL'), options.timeoutMs ?? 60_000);
  try {
    return { code: await closed, stdout, stderr };
  } finally {
    clearTimeout(timer);
    await stopChild(child, 'SIGKILL');
  }
}

/** The Debian packages the Python client's tests need (pip and setuptools for the offline install). */
export const PYTHON_PACKAGES = 'python3 python3-httpx python3-pytest python3-pip python3-setuptools';

/** Throws, naming the Debian packages, unless the interpreter has httpx, pytest, pip and setuptools. */
export async function requirePythonPackages(): Promise<void> {
  let run: PythonRun;
  try {
    // Found, not imported: importing setuptools after pip in one process trips its distutils check.
    const modules = '("httpx", "pytest", "pip", "setuptools")';
    run = await runPython([
      '-c',
      `import importlib.util as u, sys; sys.exit(" ".join(m for m in ${modules} if u.find_spec(m) is None) or 0)`,
    ]);
  } catch (error) {
    throw new Error(`cannot run ${PYTHON}: apt-get install -y ${PYTHON_PACKAGES}`, { cause: error });
  }
  if (run.code !== 0)
    throw new Error(
      `${PYTHON} lacks ${run.stderr.trim()}: apt-get install -y ${PYTHON_PACKAGES} ` +
        '(or set OCT_PYTHON to an interpreter that has httpx, pytest, pip and setuptools)',
    );
}
