#!/usr/bin/env node
// Entry of the `callctl` bin: the TypeScript source through tsx in a development checkout, else the compiled dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const compiled = new URL('../dist/src/cli/main.js', import.meta.url).href;
const argv = process.argv.slice(2);

function tsxAvailable() {
  try {
    import.meta.resolve('tsx/esm/api');
    return true;
  } catch {
    // A production install has no devDependencies: run the build instead.
    return false;
  }
}

async function load() {
  if (existsSync(source) && tsxAvailable()) {
    const { register } = await import('tsx/esm/api');
    const unregister = register();
    try {
      return await import(pathToFileURL(source).href);
    } finally {
      // Every module the CLI needs is loaded by now; the loader's worker must not keep the process alive.
      await unregister();
    }
  }
  return import(compiled);
}

try {
  const { runCli } = await load();
  process.exitCode = await runCli(argv, {
    env: process.env,
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
  });
} catch (error) {
  const message = `could not run callctl: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(argv.includes('--json') ? `${JSON.stringify({ error: message })}\n` : `${message}\n`);
  process.exitCode = 1;
}
// runCli closes its pools; should anything else still hold the event loop, do not hang an operator's shell.
setTimeout(() => process.exit(), 5_000).unref();
