// One webhook attempt: a leased delivery sent, its outcome and next try recorded, and a failure logged.
import { newRowId } from '../domain/ids.js';
import type { AttemptRecord, ClaimedDelivery } from '../storage/index.js';
import { AttemptRecorder } from './attempt-recorder.js';
import type { DeliveryWorkerOptions } from './delivery-worker-options.js';
import { classifyStatus, MAX_ATTEMPTS, nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import type { AttemptResult } from './sender.js';

export class DeliveryAttempts {
  /** Attempts sent and not yet answered. */
  private readonly unanswered = new Set<string>();
  /** Attempts a stop gave back unanswered: their answer, if it comes, is not recorded (another attempt is made). */
  private readonly givenBack = new Set<string>();
  /** Endpoint -> account, for log lines (an endpoint never changes account). */
  private readonly accounts = new Map<string, string>();
  private readonly recorder: AttemptRecorder;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.recorder = new AttemptRecorder(options);
  }

  /**
   * The attempts sent and not yet answered, given back by a stop: their answer, if it comes, is not recorded.
   * Returns their ids.
   */
  giveBackUnanswered(): string[] {
    const unanswered = [...this.unanswered];
    for (const id of unanswered) this.givenBack.add(id);
    return unanswered;
  }

  /** Whether a stop gave this attempt back unanswered. */
  isGivenBack(deliveryId: string): boolean {
    return this.givenBack.has(deliveryId);
  }

  /** Sends a delivery (or holds it: its endpoint is off) and records the attempt; resolves once it is recorded. */
  async run(delivery: ClaimedDelivery) {
    const { sender, now: clock } = this.options;
    if (!delivery.enabled) {
      await this.options.storage.deliveries.holdUnsentDelivery(delivery);
      return;
    }
    const startedAt = clock();
    this.unanswered.add(delivery.id);
    let result: AttemptResult;
    try {
      result = await sender.send(delivery, delivery.id, delivery.payload, startedAt);
    } finally {
      this.unanswered.delete(delivery.id);
    }
    // Given back by a stop while it waited: the next claim makes the attempt this one would have recorded.
    if (this.givenBack.delete(delivery.id)) return;
    const finishedAt = clock();
    const attemptsMade = delivery.attemptCount + 1;
    const outcome = classifyStatus(result.status);
    const retryAfterMs =
      result.status === 429 || result.status === 503 ? parseRetryAfter(result.retryAfter, finishedAt) : null;
    const delay =
      outcome === 'retry'
        ? nextAttemptDelay(attemptsMade, {
            retryAfterMs,
            ...(this.options.random ? { random: this.options.random } : {}),
          })
        : null;
    const exhausted = outcome === 'retry' && (delay === null || attemptsMade >= MAX_ATTEMPTS);
    this.options.onAttempt?.(exhausted ? 'exhausted' : outcome, result);

    // The attempt and the delivery's new state in one statement (atomic), batched with the attempts finishing at the
    // same time, rather than an interactive transaction of three model queries per attempt: most of the worker's CPU.
    // 410 Gone switches the endpoint off: this delivery reached no one and waits, held, for it to be enabled again.
    const status: AttemptRecord['status'] =
      outcome === 'succeeded' ? 'succeeded' : outcome === 'gone' ? 'held' : exhausted ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(finishedAt.getTime() + delay!) : null;
    const disabledReason = outcome === 'gone' ? `answered 410 Gone at ${finishedAt.toISOString()}` : null;
    await this.recorder.record({
      attemptId: newRowId(),
      deliveryId: delivery.id,
      startedAt,
      durationMs: result.durationMs,
      responseStatus: result.status,
      error: result.error?.slice(0, 500) ?? null,
      responseBody: result.body,
      responseBodyTruncated: result.bodyTruncated,
      attemptCount: attemptsMade,
      status,
      completedAt: status === 'succeeded' || status === 'failed' ? finishedAt : null,
      nextAttemptAt,
      endpointId: delivery.endpointId,
      disabledReason,
    });
    if (outcome !== 'succeeded')
      await this.logFailure(delivery, attemptsMade, result, nextAttemptAt, outcome === 'gone');
  }

  /** A warning per failed attempt and per endpoint switched off by a 410: ids and the outcome, never the secret or body. */
  private async logFailure(
    delivery: ClaimedDelivery,
    attempt: number,
    result: AttemptResult,
    nextAttemptAt: Date | null,
    gone: boolean,
  ) {
    const fields = {
      accountId: await this.accountOf(delivery.endpointId),
      endpointId: delivery.endpointId,
      deliveryId: delivery.id,
      attempt,
      ...(result.status === null ? { error: result.error } : { status: result.status }),
      durationMs: result.durationMs,
    };
    const { log } = this.options;
    if (gone) {
      log.warn(
        fields,
        'webhook endpoint disabled: it answered 410 Gone (its deliveries are held until it is enabled again from the dashboard or with callctl webhook enable)',
      );
    } else if (nextAttemptAt) {
      log.warn({ ...fields, nextAttemptAt: nextAttemptAt.toISOString() }, 'webhook attempt failed; will retry');
    } else {
      log.warn(
        fields,
        'webhook attempt failed; no attempts left, the delivery failed (callctl deliveries replay sends it again)',
      );
    }
  }

  private async accountOf(endpointId: string): Promise<string | null> {
    const known = this.accounts.get(endpointId);
    if (known) return known;
    const accountId = await this.options.storage.endpoints.accountOfEndpoint(endpointId).catch(() => null);
    if (accountId) this.accounts.set(endpointId, accountId);
    return accountId;
  }
}
