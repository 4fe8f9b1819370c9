// Serves the requests made in the same turn of the event loop with one call: the dispatcher records the dials of a
// whole claim (tens to hundreds of calls) in one statement instead of one each.

type Pending<T, R> = { item: T; resolve: (result: R) => void; reject: (error: unknown) => void };

export class Batcher<T, R> {
  private pending: Pending<T, R>[] = [];

  /**
   * `run` answers for every item, in order. When it fails for a batch with an error `retryAlone` accepts (the
   * server refused the statement, e.g. because of one bad row), each item is retried alone, so one bad item fails
   * only itself; any other error (no connection, a timeout) fails the whole batch at once rather than send N
   * statements into a pool that is already struggling.
   */
  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly retryAlone: (error: unknown) => boolean = () => true,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.pending.push({ item, resolve, reject }) === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush() {
    const batch = this.pending;
    this.pending = [];
    try {
      const results = await this.run(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || !this.retryAlone(error)) return batch.forEach((p) => p.reject(error));
      await Promise.all(batch.map((p) => this.run([p.item]).then(([result]) => p.resolve(result!), p.reject)));
    }
  }
}
