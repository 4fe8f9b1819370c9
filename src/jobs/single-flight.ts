// Background work run on demand: now, or once more right after the run under way. Never two runs at once, and a
// request made during a run is never lost (it is served by the next one).

export class SingleFlight {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Starts a run now, or right after the current one. */
  request() {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.work()
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
