// Before each test file (vitest's setupFiles), in the worker that runs it. With isolate: false (vitest.config.ts) a
// worker runs many files over one set of loaded modules, so what one file changes in the process must not reach the
// next: the environment is put back as the worker found it, statements are named again (a file may turn them off, as a
// service behind a transaction pooler does), and the shared helpers' cleanups run when the file ends. Every file's
// TMPDIR (os.tmpdir(), and the child processes it starts) is the run's directory, removed when the run ends
// (test/global-setup.ts).
import { afterAll, inject } from 'vitest';
import { useNamedStatements } from '../src/storage/statements.js';
import { runFileEndCleanups } from './helpers/file-end.js';

const worker = globalThis as { octWorkerEnv?: NodeJS.ProcessEnv };
worker.octWorkerEnv ??= { ...process.env, TMPDIR: inject('tmpDir') };
const original = worker.octWorkerEnv;
for (const name of Object.keys(process.env)) if (!(name in original)) delete process.env[name];
Object.assign(process.env, original);

useNamedStatements(true);

afterAll(runFileEndCleanups);
