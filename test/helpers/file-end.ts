// What the shared helpers stop or drop when each test file ends (the databases, apps, servers and processes it
// started). A helper registers its cleanup once, when it is first imported; test/file-setup.ts runs every cleanup after
// each test file, newest registration first (an app closes before the database under it is dropped). Vitest runs a
// setup file again before every test file, while a helper module may be loaded once for many files (isolate: false,
// vitest.config.ts): an afterAll at a helper's top level would be registered for the first file alone.

const cleanups: (() => Promise<void>)[] = [];

/** Runs `cleanup` after every test file from now on (it stops what the file left, and nothing when it left nothing). */
export function atFileEnd(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/** Every cleanup, newest first; each one runs even when an earlier one fails, and the failures are thrown. */
export async function runFileEndCleanups(): Promise<void> {
  const failures: unknown[] = [];
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length === 1 && failures[0] instanceof Error) throw failures[0];
  if (failures.length > 0) throw new AggregateError(failures, 'cleanups failed when the test file ended');
}
