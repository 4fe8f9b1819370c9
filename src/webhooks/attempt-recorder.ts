// Webhook attempts recorded in batches: those finishing together in one statement, one batch at a time.
import { refusedByServer, type AttemptRecord } from '../storage/index.js';
import type { DeliveryWorkerOptions } from './delivery-worker-options.js';

/** Attempts recorded by one statement at most. */
const MAX_BATCH = 500;

export class AttemptRecorder {
  private readonly unrecorded: { record: AttemptRecord; done: (error?: Error) => void }[] = [];
  private recording = false;

  constructor(private readonly options: Pick<DeliveryWorkerOptions, 'storage' | 'now'>) {}

  /**
   * Attempts finishing together are recorded together, one statement per batch and one batch at a time: 200
   * attempts in flight no longer queue 200 statements for the pool (whose 2 s wait they exceeded under load, each
   * such attempt being sent again after its lease). Resolves once the attempt's batch is committed.
   */
  record(record: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.unrecorded.push({ record, done: (error) => (error ? reject(error) : resolve()) });
      if (!this.recording) {
        this.recording = true;
        setImmediate(() => void this.recordPending());
      }
    });
  }

  private async recordPending() {
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded.splice(0, MAX_BATCH);
      try {
        await this.writeRecords(batch.map((b) => b.record));
        for (const b of batch) b.done();
      } catch (error) {
        // A statement the server refused (e.g. one delivery deleted meanwhile) must not fail the others with it.
        if (batch.length > 1 && refusedByServer(error)) {
          for (const b of batch)
            await this.writeRecords([b.record]).then(
              () => b.done(),
              (e: Error) => b.done(e),
            );
        } else {
          for (const b of batch) b.done(error as Error);
        }
      }
    }
    this.recording = false;
  }

  /** With the service's clock: an endpoint switched off is audited at the time of the 410 it answered. */
  private async writeRecords(records: AttemptRecord[]) {
    await this.options.storage.deliveries.recordAttempts(records, this.options.now());
  }
}
