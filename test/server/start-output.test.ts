// What `npm start` shows: one line with the dashboard's address once ready; JSON lines when stdout is not a terminal
// (a collector reads them); readable lines at a terminal, simulated with util-linux's `script` (a real pseudo-terminal,
// so LOG_FORMAT=auto is what decides); and no `info` line for the dashboard's assets in either.
import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { logFormat } from '../../src/logging/pretty.js';
import { freshDatabase } from '../helpers/database.js';
import { httpsRequest, startServer, type ServerProcess } from '../helpers/server-process.js';

async function start(env: Record<string, string>, options: Parameters<typeof startServer>[1] = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-start-'));
  const { url } = await freshDatabase({ empty: true });
  // NODE_ENV from the test runner ("test") must not decide: each test says what it runs as.
  const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: url, NODE_ENV: '', ...env }, options);
  // Under `script` the server runs in a session of its own, out of reach of a signal to `script`'s group, and once
  // `script` is gone it is no longer found below it: its pid is taken now, and it is stopped by it.
  const below = descendantsOf(server.child.pid!);
  onTestFinished(async () => {
    for (const pid of below) killQuietly(pid);
    await server.stop('SIGKILL');
  });
  return server;
}

/** The processes below `pid` (children first found, then theirs), read from /proc. */
function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (in parentheses) may hold spaces: the fields after it are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  for (let i = -1; i < found.length; i++) {
    const parent = i < 0 ? pid : found[i];
    for (const [child, ppid] of parentOf) if (ppid === parent) found.push(child);
  }
  return found;
}

function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL') {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Asks for a page and an asset, then waits until the page's request line is out (the asset's would be before it). */
async function browse(server: ServerProcess, pageLine: RegExp): Promise<string> {
  expect((await httpsRequest(server.port, '/dashboard/assets/style.css')).status).toBe(200);
  expect((await httpsRequest(server.port, '/dashboard/sign-in')).status).toBe(200);
  for (let i = 0; i < 100 && !pageLine.test(server.output()); i++) await new Promise((r) => setTimeout(r, 50));
  return server.output();
}

describe('npm start, not at a terminal', () => {
  it('writes only JSON lines, the "ready" one with the dashboard address, and no info line for an asset', async () => {
    const server = await start({});
    const output = await browse(server, /"url":"\/dashboard\/sign-in"/);
    const lines = output.split('\n').filter((l) => l !== '');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    const ready = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.msg === 'ready');
    expect(ready).toMatchObject({ dashboard: `https://localhost:${server.port}/dashboard` });
    expect(lines.filter((l) => l.includes(`https://localhost:${server.port}/dashboard`))).toHaveLength(1);
    expect(output).toMatch(/"url":"\/dashboard\/sign-in"/);
    expect(output).not.toContain('/dashboard/assets/');
  });

  it('a terminal in production (NODE_ENV=production) still gets JSON', async () => {
    const server = await start({ NODE_ENV: 'production' }, { wrap: atTerminal });
    const lines = server
      .output()
      .split(/\r?\n/)
      .filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  });
});

/** The command run by `script` in a pseudo-terminal: the server's stdout is a TTY, as in a person's shell. */
function atTerminal(command: readonly string[]): readonly string[] {
  const quoted = command.map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(' ');
  return ['script', '--quiet', '--flush', '--return', '--command', quoted, '/dev/null'];
}

describe('npm start at a terminal', () => {
  it('prints readable lines, "Dashboard: <address>" once ready, and no info line for an asset', async () => {
    const server = await start({}, { wrap: atTerminal, ready: /Dashboard: / });
    const output = stripVTControlCharacters(await browse(server, /sign-in\S* 200/)).replaceAll('\r', '');
    expect(output.match(/^Dashboard: .*$/gm)).toEqual([`Dashboard: https://localhost:${server.port}/dashboard`]);
    expect(output).toMatch(/^\d\d:\d\d:\d\d\.\d{3} .*INFO .*ready/m);
    expect(output).toMatch(/INFO .*GET \/dashboard\/sign-in 200 [\d.]+ ms/);
    expect(output).not.toContain('{"level"');
    expect(output).not.toContain('/dashboard/assets/');
  });
});

describe('npm start when its terminal closes', () => {
  it('shuts down and exits (SIGHUP), without spinning on the terminal that is gone', async () => {
    const server = await start({}, { wrap: atTerminal, ready: /Dashboard: / });
    const below = descendantsOf(server.child.pid!);
    const node = below.find((pid) => /node/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')));
    expect(node).toBeDefined();
    // The terminal goes away as a closed window's does: `script` holds its master side and dies with it.
    killQuietly(server.child.pid!);
    let alive = true;
    for (let i = 0; i < 200 && alive; i++) {
      await new Promise((r) => setTimeout(r, 100));
      alive = isAlive(node!);
    }
    expect(alive, 'the server outlived its terminal by 20 s').toBe(false);
  });
});

/** Whether `pid` is a running process (a zombie, exited but not reaped, is not). */
function isAlive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('LOG_FORMAT', () => {
  it('auto is pretty only at a terminal outside production; json and pretty are taken as asked', () => {
    expect(logFormat('auto', { isTTY: true }, undefined)).toBe('pretty');
    expect(logFormat('auto', { isTTY: true }, 'production')).toBe('json');
    expect(logFormat('auto', { isTTY: false }, undefined)).toBe('json');
    expect(logFormat('auto', {}, 'development')).toBe('json');
    expect(logFormat('json', { isTTY: true }, undefined)).toBe('json');
    expect(logFormat('pretty', { isTTY: false }, 'production')).toBe('pretty');
  });
});
