// Whether dist/ is older than the sources it is compiled from, so that `npm start` and callctl build (or fall back
// to the sources) only when something changed. No dependencies: callctl runs this on every call. Run as a command
// (`node scripts/build-state.js`), it prints the checkout's { stale, reason } as JSON: the test run asks it once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Written by scripts/build.js; its mtime is the moment the build began reading the sources. */
export const STAMP = path.join('dist', '.build-stamp');

/**
 * Where schema.prisma's generator writes the client. It is a product of the build (prisma/schema.prisma, an input,
 * stands for it) and is written after the stamp's moment, so the walk leaves it out. A test holds the schema to it.
 */
export const GENERATED_CLIENT = path.join('src', 'generated');

/**
 * tsconfig files may hold comments and trailing commas; strings are kept as they are.
 * @param {string} text
 * @returns {unknown}
 */
export function parseJsonc(text) {
  const withoutComments = text.replace(/"(?:\\.|[^"\\])*"|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) =>
    m.startsWith('"') ? m : '',
  );
  return JSON.parse(withoutComments.replace(/,(\s*[}\]])/g, '$1'));
}

/**
 * The leading part of an include pattern that has no wildcard: `src/**\/*.ts` is `src`.
 * @param {string} pattern
 */
function patternRoot(pattern) {
  const segments = pattern.replace(/^\.\//, '').split('/');
  /** @type {string[]} */
  const plain = [];
  for (const segment of segments) {
    if (/[*?[{]/.test(segment)) break;
    plain.push(segment);
  }
  return plain.join('/');
}

/**
 * The fields of a tsconfig file that say what it compiles.
 * @typedef {{ include?: string[], files?: string[], extends?: unknown }} TsConfig
 */

/**
 * Every path the build reads, relative to root: what tsconfig.build.json includes (so a top-level source directory
 * added there is covered), the configs that shape tsc's output (package.json's "type" decides the module format),
 * and the Prisma schema the client is generated from.
 * @param {string} root
 */
export function buildInputs(root) {
  /** @type {string[]} */
  const configs = [];
  /** @type {string[] | undefined} */
  let include;
  for (/** @type {string | undefined} */ let file = 'tsconfig.build.json'; file;) {
    configs.push(file);
    const config = /** @type {TsConfig} */ (parseJsonc(fs.readFileSync(path.join(root, file), 'utf8')));
    include ??= config.include || config.files ? [...(config.include ?? []), ...(config.files ?? [])] : undefined;
    const parent = config.extends;
    // A package's base config (no leading dot) changes only with an install, and installing builds.
    file =
      typeof parent === 'string' && parent.startsWith('.')
        ? path.normalize(path.join(path.dirname(file), parent.endsWith('.json') ? parent : `${parent}.json`))
        : undefined;
  }
  const sources = (include ?? []).map(patternRoot).filter(Boolean);
  return [...new Set([...sources, ...configs, 'package.json', 'prisma/schema.prisma', 'prisma.config.ts'])];
}

/**
 * The newest mtime under the given paths (directories count too: deleting or renaming a file changes its directory).
 * @param {string} root
 * @param {string[]} relativePaths
 * @param {string[]} [skip]
 */
export function newestMtime(root, relativePaths, skip = []) {
  const skipped = new Set(skip.map((p) => path.resolve(root, p)));
  /** @type {{ mtimeMs: number, file: string | null }} */
  let newest = { mtimeMs: 0, file: null };
  /** @param {string} file */
  const visit = (file) => {
    if (skipped.has(file)) return;
    let stat;
    try {
      stat = fs.statSync(file);
    } catch {
      return; // an include that does not exist (yet) is nothing to compile
    }
    if (stat.mtimeMs > newest.mtimeMs) newest = { mtimeMs: stat.mtimeMs, file };
    if (stat.isDirectory()) for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
  };
  for (const relative of relativePaths) visit(path.resolve(root, relative));
  return newest;
}

/**
 * The rule itself: built after the newest source was written.
 * @param {number | undefined} stampMtimeMs
 * @param {number} newestSourceMtimeMs
 */
export function isStale(stampMtimeMs, newestSourceMtimeMs) {
  return stampMtimeMs === undefined || newestSourceMtimeMs > stampMtimeMs;
}

/**
 * { stale, reason } for the checkout at root.
 * @param {string} root
 * @returns {{ stale: boolean, reason: string }}
 */
export function buildStatus(root) {
  /** @type {number} */
  let stampMtimeMs;
  try {
    stampMtimeMs = fs.statSync(path.join(root, STAMP)).mtimeMs;
  } catch {
    return { stale: true, reason: 'not built yet' };
  }
  const newest = newestMtime(root, buildInputs(root), [GENERATED_CLIENT]);
  if (!isStale(stampMtimeMs, newest.mtimeMs)) return { stale: false, reason: 'up to date' };
  return { stale: true, reason: `${path.relative(root, newest.file)} changed since the last build` };
}

/**
 * The moment a build begins: later edits are newer than its stamp. The generated client's directory is made first:
 * creating it would date its parent (src/) after that moment, and every check would find the build stale. Anything
 * the build reads (the schema, the sources) it reads later than this, so the millisecond rounded up loses nothing.
 * @param {string} root
 */
export function beginBuild(root) {
  fs.mkdirSync(path.join(root, GENERATED_CLIENT), { recursive: true });
  return Date.now() + 1;
}

/**
 * Records that dist/ holds what the sources were at startedMs.
 * @param {string} root
 * @param {number} startedMs
 */
export function writeStamp(root, startedMs) {
  const file = path.join(root, STAMP);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ sources_as_of: new Date(startedMs).toISOString() })}\n`);
  fs.utimesSync(file, startedMs / 1000, startedMs / 1000);
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] && path.resolve(process.argv[1]) === self)
  process.stdout.write(`${JSON.stringify(buildStatus(path.resolve(path.dirname(self), '..')))}\n`);
