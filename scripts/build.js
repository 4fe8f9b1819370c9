#!/usr/bin/env node
// npm run build: the Prisma client, tsc into dist/, the server and callctl each bundled into one file, then the stamp
// that npm start and callctl compare the sources with.
//   --if-stale  build only when the sources changed since the last build (npm start)
//   --install   the postinstall: a production install (no typescript) only generates the client; a failed compile
//               is reported but does not fail the install (npm start compiles again and stops on the error)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beginBuild, buildStatus, writeStamp } from './build-state.js';
import { bundle } from './bundle.js';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = new Set(process.argv.slice(2));

/**
 * @param {string} script
 * @param {string[]} scriptArgs
 */
function run(script, scriptArgs) {
  return spawnSync(process.execPath, [script, ...scriptArgs], { cwd: root, stdio: 'inherit' }).status ?? 1;
}

function tscPath() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

if (args.has('--if-stale')) {
  const status = buildStatus(root);
  if (!status.stale) process.exit(0);
  process.stderr.write(`building (${status.reason})\n`);
}

// Sources read from here on are in this build; an edit made while it runs makes the next check rebuild.
const started = beginBuild(root);
// The bundles of an earlier build must not outlive this one's compiled files (npm start and callctl prefer them).
const BUNDLES = { server: path.join('dist', 'server.mjs'), callctl: path.join('dist', 'callctl.mjs') };
for (const file of Object.values(BUNDLES))
  for (const f of [file, `${file}.map`]) fs.rmSync(path.join(root, f), { force: true });
const generated = run(path.join(root, 'scripts', 'prisma-generate.js'), []);
if (generated !== 0) process.exit(generated);
const tsc = tscPath();
if (!tsc) {
  if (args.has('--install')) process.exit(0);
  process.stderr.write('typescript is not installed: run npm install (with devDependencies) to build\n');
  process.exit(1);
}
const compiled = run(tsc, ['-p', 'tsconfig.build.json']);
if (compiled !== 0) {
  if (!args.has('--install')) process.exit(compiled);
  process.stderr.write('the TypeScript build failed (above); npm start will build again\n');
  process.exit(0);
}
await bundle(root, path.join('dist', 'src', 'server.js'), BUNDLES.server, { sourcemap: true });
await bundle(root, path.join('dist', 'src', 'cli', 'main.js'), BUNDLES.callctl);
writeStamp(root, started);
