// Background work run on demand: now, or once more right after the run under way. Never two runs at once, and a
// request made during a run is never lost (it is served by the next one). Runs are background work whoever asks:
// a request that asks (the dispatcher woken after an acceptance) must not hand its priority in the pool to them.
import { inBackground } from '../storage/database.js';

export class SingleFlight {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly work: () => Promise<void>, private readonly onError: (error: Error) => void) {}

  /** Starts a run now, or right after the current one. */
  request() {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = inBackground(() => this.work())
      .catch(this.onError)
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.request();
        }
      });
  }

  /** Resolves once no run is under way or asked for. */
  async settle() {
    while (this.running) await this.running;
  }
}
