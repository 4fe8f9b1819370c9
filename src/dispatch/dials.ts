// A dispatcher's dials: claimed calls dialled under their lease and recorded, and a dead dispatcher's calls taken over.
import type { CallRow as Call } from '../storage/index.js';
import { transitionCalls } from '../calls/transition.js';
import { Batcher } from '../jobs/batcher.js';
import type { ThrottledLog } from '../logging/throttled-log.js';
import { refusedByServer, type ClaimCandidate, type DialIntent, type Storage } from '../storage/index.js';
import type { DispatcherOptions } from './dispatcher-options.js';
import { CarrierDialers, CarrierUnusable } from './carrier-dialers.js';

/**
 * A call about to be dialled, with its agent's voicemail setting and the account carrier it goes through (read with
 * it by the claim or the takeover).
 */
export type DialCall = Call & Pick<ClaimCandidate, 'agentVoicemail' | 'agentVoicemailMessage' | 'carrierInUse'>;

/**
 * Attempts to record a provider id after the provider accepted the dial, and the waits before each: about the
 * default lease in all (a database outage of that long is then left to callbacks and lease recovery).
 */
const RECORD_DIALLED_RETRIES_MS = [0, 250, 1_000, 4_000, 10_000, 15_000];
/**
 * How long after its lease ran out a dialled call (intent recorded, no provider id) is left to its owner: the owner
 * may be alive and still retrying the write of the provider id (a database outage longer than the lease).
 */
const RECORD_DIALLED_WINDOW_MS = RECORD_DIALLED_RETRIES_MS.reduce((sum, ms) => sum + ms, 0);

export class DialWork {
  private readonly dialing = new Set<Promise<void>>();
  /** Calls this dispatcher is dialling or recording: its own, whatever their lease says, never "recovered" by it. */
  private readonly ownDials = new Set<string>();
  private readonly storage: Storage;
  /** Intents and provider ids of the calls dialled together are recorded together. */
  private readonly intents = new Batcher<DialIntent, boolean>(async (intents) => {
    const recorded = await this.storage.claims.recordDialIntents(intents, this.id);
    return intents.map(({ id }) => recorded.has(id));
  }, refusedByServer);
  /** Every call's dialer: its account carrier's or the environment's. */
  private readonly dialers: CarrierDialers;
  private readonly dialled = new Batcher<{ id: string; providerCallId: string; attempt: number }, void>(
    async (calls) => {
      await this.storage.claims.recordProviderIds(calls, this.id);
      return calls.map(() => undefined);
    },
    refusedByServer,
  );

  constructor(
    /** The dispatcher's id: the owner of the leases it takes. */
    private readonly id: string,
    private readonly leaseMs: number,
    private readonly options: DispatcherOptions,
    /** The dispatcher's, shared: the database going away fails the bookkeeping of every call in flight at once. */
    private readonly logs: ThrottledLog,
    /** The dispatcher's loop: once it stops, a dial's bookkeeping stops retrying. */
    private readonly loop: { readonly stopped: boolean },
  ) {
    this.storage = options.storage;
    this.dialers =
      options.dialers ??
      new CarrierDialers({
        environment: options.dialer,
        publicBaseUrl: undefined,
        twilioApiBaseUrl: '',
        telnyxApiBaseUrl: '',
        signalwireApiBaseUrl: undefined,
        environmentKeys: {},
        storage: options.storage,
      });
  }

  /** Waits for the dials in flight and their bookkeeping; never rejects. */
  settle() {
    return Promise.allSettled([...this.dialing]);
  }

  /** Keeps `work` until it ends; the returned promise ends with it and never rejects. */
  track(work: Promise<void>): Promise<void> {
    this.dialing.add(work);
    // Never an unobserved rejection: close-with-grace would stop the whole process for one call's bookkeeping.
    return work
      .catch((error: Error) => this.logs.error('dial work', { err: error }, 'dial work failed'))
      .finally(() => this.dialing.delete(work));
  }

  /** Records the intent to dial before dialling: a call whose intent is recorded is never dialled again. */
  async dial(call: DialCall) {
    this.ownDials.add(call.id);
    try {
      await this.dialOnce(call);
    } finally {
      this.ownDials.delete(call.id);
    }
  }

  private async dialOnce(call: DialCall) {
    const { now, log } = this.options;
    let providerCallId: string;
    try {
      await this.options.beforeDial?.(call);
      // Its account's carrier, or the environment's; recorded with the intent, for its callbacks and live changes.
      const { dialer, intent } = await this.dialers.dialerFor(call.carrierInUse);
      if (!(await this.intents.add({ id: call.id, ...intent }))) return; // another dispatcher took it over
      ({ providerCallId } = await dialer.dial({
        callId: call.id,
        accountId: call.accountId,
        attempt: call.attempt,
        to: call.phoneNumber,
        from: call.fromNumber,
        agentId: call.agentId,
        name: call.name,
        email: call.email,
        voicemail: call.agentVoicemail,
        voicemailMessage: call.agentVoicemailMessage,
      }));
    } catch (error) {
      try {
        // Only the dispatcher still holding the lease for this attempt may fail it, decided under the call's lock:
        // after a takeover it is someone else's, and after a callback ended the attempt (a dial that timed out but
        // rang) the call may already wait for, or dial, its next one.
        if (await this.failAttempt(call, now()))
          log.error(
            { err: error, callId: call.id, attempt: call.attempt, accountId: call.accountId },
            error instanceof CarrierUnusable ? "dial refused: the account's carrier cannot be used" : 'dial failed',
          );
      } catch (bookkeeping) {
        // The database is gone too: the lease runs out and recover() settles the call (dial once, or provider_error).
        this.logs.error(
          'dial unrecorded',
          { err: bookkeeping, dialError: error, callId: call.id },
          'dial failed and could not be recorded; left to lease recovery',
        );
      }
      return;
    }
    await this.recordDialled(call.id, call.attempt, providerCallId);
  }

  /**
   * Fails the attempt of `call` this dispatcher dialled, with provider_error, if it still holds it: decided under the
   * call's lock, as after a takeover it is someone else's, and after a callback ended the attempt (a dial that timed
   * out but rang) the call may wait for, or dial, its next one. Returns whether it did.
   */
  private async failAttempt(call: Call, now: Date): Promise<boolean> {
    const [applied] = await transitionCalls(
      this.storage,
      { kind: 'ids', ids: [call.id] },
      (locked) =>
        locked.status === 'dialing' && locked.leaseOwner === this.id && locked.attempt === call.attempt
          ? { update: { kind: 'failed', reason: 'provider_error' } }
          : null,
      this.updateContext(now, 'dispatcher'),
    );
    return Boolean(applied?.steps.length);
  }

  private updateContext(now: Date, source: string) {
    return { now, source, queuedCallTtlMs: this.options.queuedCallTtlMs };
  }

  /**
   * The provider accepted the dial: the callee's phone may be ringing, so from here on the call is never failed for
   * our bookkeeping. Its provider id is recorded, retried a few times; if that keeps failing the provider's own
   * status callbacks record it (Twilio's carry the CallSid), and only a call that never gets one is settled by
   * lease recovery.
   */
  private async recordDialled(callId: string, attempt: number, providerCallId: string) {
    let lastError: unknown;
    for (const waitMs of RECORD_DIALLED_RETRIES_MS) {
      // Shutting down: callbacks and lease recovery take it from here (a stop must not wait out the retries).
      for (const until = Date.now() + waitMs; Date.now() < until && !this.loop.stopped;) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - Date.now())));
      }
      if (this.loop.stopped && waitMs > 0) break;
      try {
        await this.dialled.add({ id: callId, providerCallId, attempt });
        return;
      } catch (error) {
        lastError = error;
      }
    }
    this.logs.error(
      'provider id unrecorded',
      { err: lastError, callId, providerCallId },
      'dialled, but the provider id could not be recorded; left to callbacks and lease recovery',
    );
  }

  /**
   * Calls claimed by a dispatcher that died: this attempt never dialled (no intent for it: dial_attempts < attempt)
   * -> dial it now, once; intent recorded but no provider id -> the outcome is unknown and dialling again could ring
   * the callee twice, so the attempt fails (provider_error, which no policy retries), once its owner's window for
   * recording the provider id has passed too (it may be alive, waiting out a database outage). This dispatcher's own
   * dials are never taken for a dead one's. A call between attempts is initiated, not a claim: any claim takes it.
   */
  async recover() {
    const now = this.options.now();
    const stale = await this.storage.claims.staleClaims(now);
    const ownerMayBeRecording = now.getTime() - RECORD_DIALLED_WINDOW_MS;
    for (const call of stale) {
      if (this.ownDials.has(call.id)) continue;
      const intended = call.dialAttempts >= call.attempt;
      if (intended && call.leaseExpiresAt && call.leaseExpiresAt.getTime() > ownerMayBeRecording) continue;
      const leaseExpiresAt = new Date(now.getTime() + this.leaseMs);
      if (!(await this.storage.claims.takeOverClaim({ callId: call.id, owner: this.id, leaseExpiresAt, now })))
        continue;
      this.options.log.warn(
        { callId: call.id, attempt: call.attempt, dialAttempts: call.dialAttempts },
        'recovering a call whose dispatcher died',
      );
      if (!intended) void this.track(this.dial({ ...call, leaseOwner: this.id, leaseExpiresAt }));
      else await this.failAttempt(call, now);
    }
  }
}
