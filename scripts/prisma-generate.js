#!/usr/bin/env node
// Generates the Prisma client from prisma/schema.prisma into src/generated/prisma. `prisma generate` needs no
// schema engine, but the CLI insists on one being present; pointing it at any file spares an offline download.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let cli;
try {
  cli = require.resolve('prisma/build/index.js');
} catch {
  // Production installs (npm ci --omit=dev) have no Prisma CLI: the image ships the client generated at build.
  process.exit(0);
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const result = spawnSync(process.execPath, [cli, 'generate', '--no-hints'], { encoding: 'utf8', env });
if (result.status !== 0) process.stderr.write(`${result.stdout}${result.stderr}`);
process.exit(result.status ?? 1);
