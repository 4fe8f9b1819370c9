#!/usr/bin/env node
// Entry of the `callctl` bin: the build (dist/callctl.mjs, the CLI in one file; else dist/src/cli/main.js) whenever it
// is built from the current sources (or there are no sources, as in the image); the TypeScript source through tsx in
// a checkout whose build is out of date.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

// A command lasts a second: optimising Prisma's WebAssembly query compiler (on other threads) costs more CPU than it
// saves, a third of the call on Node 20. Node 20 still takes V8 flags at run time (set before the client compiles its
// module); later V8 versions ignore the change, and one without the flag would print an error on stdout.
if (process.versions.node.startsWith('20.')) v8.setFlagsFromString('--liftoff-only');

const root = fileURLToPath(new URL('..', import.meta.url));
const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const bundle = new URL('../dist/callctl.mjs', import.meta.url);
const compiled = existsSync(bundle) ? bundle.href : new URL('../dist/src/cli/main.js', import.meta.url).href;
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

/** Transpiling src/ through tsx costs seconds a call; a current build costs nothing. */
async function buildIsCurrent() {
  const { buildStatus } = await import('../scripts/build-state.js');
  return !buildStatus(root).stale;
}

/** @typedef {typeof import('../src/cli/main.js')} CliModule */

/**
 * A module imported by its URL is of no type; this one is src/cli/main.ts (the source, its bundle or its compiled
 * module). Through `unknown`: the lint rules do not see a JSDoc cast.
 * @param {string} url
 * @returns {Promise<CliModule>}
 */
async function importCli(url) {
  /** @type {unknown} */
  const cli = await import(url);
  return /** @type {CliModule} */ (cli);
}

async function load() {
  if (existsSync(source) && !(await buildIsCurrent()) && tsxAvailable()) {
    const { register } = await import('tsx/esm/api');
    const unregister = register();
    try {
      return await importCli(pathToFileURL(source).href);
    } finally {
      // Every module the CLI needs is loaded by now; the loader's worker must not keep the process alive.
      await unregister();
    }
  }
  return importCli(compiled);
}

// A write to a reader that went away fails through its callback (rawStdout above); not an uncaught 'error' as well.
process.stdout.on('error', () => undefined);
try {
  const { runCli } = await load();
  process.exitCode = await runCli(argv, {
    env: process.env,
    // callctl's real clock: runCli and its commands take theirs from here.
    now: () => new Date(),
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    // Raw output (`calls export` without --out) at stdout's pace; a reader gone (`| head`) fails the command (exit 1).
    rawStdout: (chunk) =>
      new Promise((resolve, reject) => {
        process.stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
      }),
  });
} catch (error) {
  const message = `could not run callctl: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(argv.includes('--json') ? `${JSON.stringify({ error: message })}\n` : `${message}\n`);
  process.exitCode = 1;
}
// runCli closes its pools; should anything else still hold the event loop, do not hang an operator's shell.
setTimeout(() => process.exit(), 5_000).unref();
