// Rate-limit keys this process saw over their limit, until their fixed window ends: refusals without a store call.
import { performance } from 'node:perf_hooks';

export interface StoreAnswer {
  current: number;
  ttl: number;
}

/**
 * Within a fixed window (the expiry set by the first increment only) the count only grows, so once the store said
 * "over the limit, ttl T" for a key, every further request for it is refused until T has passed, whatever other
 * replicas do. Answering those here changes no answer; it only stops this process adding increments past the
 * limit. The window's end is counted from before the store was asked, so a remembered refusal never outlives the
 * store's window. Only a request with the same `max` is answered; bounded, and forgetting a key only costs it a
 * store call again.
 */
export class RefusedKeys {
  private readonly entries = new Map<string, { until: number; max: number }>();

  /** `now`: a monotonic clock in ms; the caller reads it for `askedAt` too. */
  constructor(
    private readonly capacity = 10_000,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** The store's answer for a key remembered over `max`, or null: ask the store. */
  answer(key: string, max: number): StoreAnswer | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    const ttl = entry.until - this.now();
    if (ttl <= 0) {
      this.entries.delete(key);
      return null;
    }
    return entry.max === max ? { current: max + 1, ttl } : null;
  }

  /** Records the store's answer `result` to a call made at `askedAt` (a reading of the same clock). */
  observe(key: string, max: number, askedAt: number, result: StoreAnswer) {
    if (result.current <= max || !(result.ttl > 0)) return;
    if (this.entries.size >= this.capacity) this.makeRoom();
    this.entries.set(key, { until: askedAt + result.ttl, max });
  }

  /** Forgets every key (the store may have lost its counts). */
  clear() {
    this.entries.clear();
  }

  get size() {
    return this.entries.size;
  }

  // Expired entries go first; when that frees little, all go, which keeps this amortised O(1) however many keys
  // are over their limit at once.
  private makeRoom() {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
    if (this.entries.size > this.capacity * 0.9) this.entries.clear();
  }
}
