// Background work gives way to requests. A background pass (the dispatcher's claims, the simulated dialer, the webhook
// worker) awaits this between its statements: while requests are waiting for a database connection it waits too, a
// millisecond at a time, up to `maxWaitMs` (so under a sustained overload it still runs, in larger batches). The pools
// are separate (src/storage/database.ts), so requests never queue behind background work for a connection; this keeps
// them from queueing behind it for the database's CPU. Reads pg-pool's documented `waitingCount`.
export function requestsFirst(requestPool: { waitingCount: number }, maxWaitMs = 100): () => Promise<void> {
  return async () => {
    if (requestPool.waitingCount === 0) return;
    const until = performance.now() + maxWaitMs;
    while (requestPool.waitingCount > 0 && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 1));
  };
}
