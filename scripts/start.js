// npm start: builds only when the sources changed since the last build, checks the configuration before loading
// the server (a mistake is reported at once, not after a second of loading), then runs the server here: its one-file
// bundle (dist/server.mjs), or the compiled modules of a build without one.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildStatus } from './build-state.js';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
/** @param {string} file */
const compiled = (file) => pathToFileURL(path.join(root, 'dist', 'src', file)).href;

if (buildStatus(root).stale) {
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.js'), '--if-stale'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

// The same check and exit code (78, EX_CONFIG) as src/server.ts, which checks again.
// A module imported by its URL is of no type; this one is the compiled src/config.ts. (Through `unknown`: the lint
// rules do not see a JSDoc cast.)
/** @type {unknown} */
const configModule = await import(compiled('config.js'));
const { ConfigError, loadConfig } = /** @type {typeof import('../src/config.js')} */ (configModule);
try {
  loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(78);
}
const bundle = path.join(root, 'dist', 'server.mjs');
await import(existsSync(bundle) ? pathToFileURL(bundle).href : compiled('server.js'));
