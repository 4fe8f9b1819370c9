// Types of scripts/bundle.js (plain JavaScript, run by scripts/build.js).
export const EXTERNAL: string[];
export function bundle(root: string, entry: string, outfile: string, options?: { sourcemap?: boolean }): Promise<void>;
