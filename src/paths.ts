// Where the project's files are, whether running from src/ (tsx, tests) or from the compiled dist/src/.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'prisma'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no project root above ${start}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'prisma', 'migrations');
export const SCHEMA_FILE = path.join(PROJECT_ROOT, 'prisma', 'schema.prisma');
/** The dashboard's templates and stylesheet, read from the source tree (no build step), in development and in the image. */
export const VIEWS_DIR = path.join(PROJECT_ROOT, 'src', 'views');
