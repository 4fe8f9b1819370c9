// The one promise timeout: waits for work on a dependency (readiness checks, the metrics' call counts) at most so
// long. The work is not cancelled, only no longer waited for.

/** Resolves or rejects as `promise` does, or rejects with "timed out after <ms> ms" first; the timer never outlives it. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Unref'd: a pending check never holds the process open at shutdown.
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
