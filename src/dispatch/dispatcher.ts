// The dispatcher, one per process: claims due calls first-in first-out per account without exceeding the account's
// concurrency across all replicas (one claimer per account at a time, by an advisory lock, while slots are counted
// and taken), dials them under a lease, recovers calls whose claimer died, expires calls that waited too long, and
// advances simulated calls.
//
// Two kinds of pass, each never twice at once: claims, woken by every acceptance (in process), by freed slots
// (NOTIFY) and by the poll; and housekeeping (expiry and recovery sweeps on the poll, simulated calls advanced on
// their scripted times), which runs beside the claims so that a new call never waits for it (issue 16.3).
//
// With several replicas one leads (src/jobs/wakeable-loop.ts): only the leader polls, sweeps and answers the freed
// slots' NOTIFYs, as a lone replica does; the others take the lead over within LEAD_RETRY_MS (src/jobs/wakeable-loop.ts)
// of the leader's end (a SIGKILL included), so the database's work does not grow with the number of replicas (issue
// 25.4). A follower does not claim the calls it accepts either: it hands their accounts to the leader (one message for
// all accepted since the last, ACCEPTED_PREFIX: a Redis PUBLISH when the leader subscribes, src/dispatch/
// hand-off-relay.ts, else a NOTIFY), which claims them with its own, so under load every claim, dial and transition is
// batched in one process as with one replica. A hand-off the leader never hears (it died meanwhile) is
// found by its successor's first due-accounts query, within LEAD_RETRY_MS of PostgreSQL seeing the leader's connection
// gone; one it heard but did not claim (a failed pass), by its next poll. When more accounts have calls due than the
// leader's claim takes (a queue that became due at once), it asks the others to help (a lock on its connection that
// they look at within LEAD_RETRY_MS: followers do not LISTEN, since every listener reads every NOTIFY in a transaction
// of its own): each then claims due accounts too, those no other replica holds, until none is left.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { CallRow as Call } from '../storage/index.js';
import { planCallBatch, transitionCalls, type CallChange } from '../calls/transition.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { windowZoneOf } from '../domain/recipient-timezone.js';
import type { Dialer } from './dialer.js';
import type { HandOffRelay } from './hand-off-relay.js';
import { advanceSimulatedCalls, simulatedWakeups, type SimulatedTiming } from './simulated-dialer.js';
import { Batcher } from '../jobs/batcher.js';
import { CoalescedNotify } from '../jobs/coalesced-notify.js';
import { SingleFlight } from '../jobs/single-flight.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';
import {
  acceptedAccounts,
  acceptedPayloads,
  CALLS_CHANNEL,
  notifiedAccounts,
  refusedByServer,
  type ClaimedDelivery,
  type Storage,
} from '../storage/index.js';
import type { ClaimCandidate, ListenConnection } from '../storage/index.js';

/** A call about to be dialled, with its agent's voicemail setting (read with it by the claim or the takeover). */
type DialCall = Call & Pick<ClaimCandidate, 'agentVoicemail' | 'agentVoicemailMessage'>;

export interface DispatcherOptions {
  /** The background pool's storage (fastify.backgroundStorage): this work waits for connections, requests do not. */
  storage: Storage;
  databaseUrl: string;
  /** The process's LISTEN connection, shared with its other loops (src/jobs/wakeable-loop.ts); else one of its own. */
  connection?: ListenConnection;
  /** Awaited between the statements of a pass: background work gives way to waiting requests (src/jobs/requests-first.ts). */
  requestsFirst?: () => Promise<void>;
  dialer: Dialer;
  now: () => Date;
  log: FastifyBaseLogger;
  maxConcurrentCalls: number;
  simulated?: SimulatedTiming;
  /** How long a claim protects a call between claim and dial. */
  leaseMs?: number;
  /** A retried call's time to live from its next attempt (QUEUED_CALL_TTL_HOURS); the simulated calls' attempts end here. */
  queuedCallTtlMs?: number;
  /** Poll interval: the fallback for missed notifications, window openings and expiries. */
  pollMs?: number;
  /** How often a follower tries to take the lead (default LEAD_RETRY_MS of src/jobs/wakeable-loop.ts). */
  leadRetryMs?: number;
  /** Test hook: runs after a claim commits and before the dial (a crash there must not lose the call). */
  beforeDial?: (call: Call) => Promise<void> | void;
  /** Observes each call this dispatcher claimed, after the claim commits (metrics: dispatch latency). */
  onClaimed?: (call: Call) => void;
  /** Observes the seconds of each claim pass that had accounts to claim for, from its start to after its commit (metrics). */
  onClaimPass?: (seconds: number) => void;
  /**
   * This process's webhook worker, if it has one: the call.started deliveries a claim writes are leased to it in the
   * claim's transaction and handed over after the commit, so a call's first webhook goes out without waiting for the
   * worker to be woken and to claim it.
   */
  webhooks?: WebhookHandOff;
  /**
   * Redis pub/sub for the hand-offs (src/dispatch/hand-off-relay.ts): a follower publishes, the leader subscribes;
   * a hand-off nobody heard goes by NOTIFY. Without it, every hand-off is a NOTIFY.
   */
  relay?: HandOffRelay;
}

export interface WebhookHandOff {
  /** How long a delivery handed over stays leased to the worker. */
  readonly leaseMs: number;
  /** Sends deliveries leased to it (or gives them back); called after the transaction that leased them commits. */
  take(deliveries: ClaimedDelivery[]): void;
}

const CLAIM_ACCOUNTS_PER_PASS = 50;

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
/** A call whose agent's stored windows or zone cannot be read waits this long before the next try. */
const UNREADABLE_WINDOWS_RETRY_MS = 60_000;

export class Dispatcher {
  readonly id = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly loop: WakeableLoop;
  /** Housekeeping: the sweeps (when due: on the poll) and the simulated calls' next steps. */
  private readonly housekeeping: SingleFlight;
  private sweepDue = true;
  /**
   * Accounts whose calls this process just accepted, or (leading) a follower handed over, or whose slot freed (a
   * call's end, NOTIFYed): the next claim goes straight to them, without the due-accounts query (a round trip on every
   * new call's path, and a read of every account with a queue). Any other wake (poll, another NOTIFY, start, settle)
   * asks for that query, so calls of other accounts, and what a hinted claim left, are found within a poll.
   */
  private readonly hinted = new Set<string>();
  /** A follower's acceptances, sent to the leader: one NOTIFY for all the accounts accepted since the last one. */
  private readonly handOff: CoalescedNotify;
  /**
   * A wake asked for the due-accounts query. Not at first: the leader asks for it when it takes the lead (and a
   * replica that cannot LISTEN on its first poll); a follower's passes claim only what it was hinted.
   */
  private dueQueryWanted = false;
  private readonly dialing = new Set<Promise<void>>();
  /** Calls this dispatcher is dialling or recording: its own, whatever their lease says, never "recovered" by it. */
  private readonly ownDials = new Set<string>();
  private readonly storage: Storage;
  /** The database going away fails the bookkeeping of every call in flight at once. */
  private readonly logs: ThrottledLog;
  /** Intents and provider ids of the calls dialled together are recorded together. */
  private readonly intents = new Batcher<string, boolean>(async (ids) => {
    const recorded = await this.storage.claims.recordDialIntents(ids, this.id);
    return ids.map((id) => recorded.has(id));
  }, refusedByServer);
  private readonly dialled = new Batcher<{ id: string; providerCallId: string; attempt: number }, void>(
    async (calls) => {
      await this.storage.claims.recordProviderIds(calls, this.id);
      return calls.map(() => undefined);
    },
    refusedByServer,
  );

  constructor(private readonly options: DispatcherOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.storage = options.storage;
    this.logs = new ThrottledLog(options.log);
    this.loop = new WakeableLoop({
      name: 'dispatcher',
      databaseUrl: options.databaseUrl,
      ...(options.connection ? { connection: options.connection } : {}),
      channel: CALLS_CHANNEL,
      pollMs: options.pollMs ?? 250,
      log: options.log,
      pass: () => this.claims(),
      onPoll: () => {
        this.dueQueryWanted = true;
        this.sweep();
      },
      onNotification: (payload) => {
        // A follower's hand-off and a freed slot name the accounts to claim for; any other NOTIFY asks which
        // accounts are due.
        const named = notifiedAccounts(payload);
        if (named === null) this.dueQueryWanted = true;
        else for (const id of named) this.hinted.add(id);
      },
      // The leader has more due accounts than its claims take: claim due accounts too, until none is left.
      onHelpWanted: () => {
        this.dueQueryWanted = true;
      },
      leadership: {
        ...(options.leadRetryMs ? { retryMs: options.leadRetryMs } : {}),
        onChange: (leading) => {
          options.log.info({ dispatcher: this.id }, leading ? 'dispatcher leads' : 'dispatcher no longer leads');
          if (!leading) return void options.relay?.unsubscribe();
          // Hand-offs published before this subscription is made reach nobody: they come by NOTIFY, already heard.
          void options.relay?.subscribe((payload) => this.handedOver(payload));
          // What the previous leader would have found: every due account, and the sweeps.
          this.wake();
          this.sweep();
        },
      },
    });
    this.handOff = new CoalescedNotify(options.storage, CALLS_CHANNEL, options.log, {
      payloads: acceptedPayloads,
      ...(options.relay ? { relay: options.relay } : {}),
    });
    this.housekeeping = new SingleFlight(
      async () => {
        if (this.loop.stopped) return;
        await this.housekeep();
        this.logs.recovered('housekeeping', 'dispatcher housekeeping succeeds again');
      },
      (error) => this.logs.error('housekeeping', { err: error }, 'dispatcher housekeeping failed'),
    );
  }

  async start() {
    await this.loop.start();
    if (this.loop.leading) this.sweep();
  }

  /** Whether this dispatcher polls, sweeps and answers NOTIFYs for every replica (see the top of the file). */
  get leading() {
    return this.loop.leading;
  }

  async stop() {
    // Before the lead goes: a hand-off published from here on reaches nobody, so it comes by NOTIFY to this leader
    // (until it stops listening) or to the next, rather than to a subscriber that ignores it.
    await this.options.relay?.unsubscribe();
    await this.loop.stop();
    // Hand-offs on their way still reach the leader.
    await this.handOff.settle();
    await this.housekeeping.settle();
    await Promise.allSettled([...this.dialing]);
  }

  /**
   * Runs a claim pass now, or right after the current one. `accountId`: the account whose call this process just
   * accepted; the pass claims for it without first asking which accounts are due, or, while another replica leads,
   * that replica's does (the account is handed to it).
   */
  wake(accountId?: string) {
    // Not leading means another replica's connection holds the lead (without one, or behind a transaction pooler,
    // this one leads): it hears the hand-off, or its successor looks for due accounts when it takes over.
    if (accountId !== undefined && !this.loop.leading && !this.loop.stopped) return this.handOff.notify(accountId);
    if (accountId === undefined) this.dueQueryWanted = true;
    else this.hinted.add(accountId);
    this.loop.wake();
  }

  /**
   * Runs housekeeping (sweeps included) and then claims until none is pending, and waits for their dials: tests use
   * it after moving an injected clock.
   */
  async settle() {
    this.dueQueryWanted = true;
    this.sweep();
    await this.housekeeping.settle();
    await this.loop.settle();
    await Promise.allSettled([...this.dialing]);
  }

  /** One full pass in this order: the sweeps, the claims, the simulated calls' next steps. */
  async tick() {
    await this.giveWay();
    await this.expire();
    await this.recover();
    this.dueQueryWanted = true;
    await this.claims();
    await this.advance();
  }

  private giveWay() {
    return this.options.requestsFirst?.() ?? Promise.resolve();
  }

  /** Asks for the expiry and recovery sweeps in the next housekeeping pass. */
  private sweep() {
    this.sweepDue = true;
    if (!this.loop.stopped) this.housekeeping.request();
  }

  /** Asks for the simulated calls' next steps. */
  private advanceSoon() {
    if (!this.loop.stopped) this.housekeeping.request();
  }

  private async housekeep() {
    if (this.sweepDue) {
      this.sweepDue = false;
      await this.giveWay();
      await this.expire();
      await this.recover();
    }
    await this.advance();
  }

  /** Claims until nothing more is due (the usual pass: one claim transaction and done). */
  private async claims() {
    do await this.giveWay();
    while ((await this.claim()) && !this.loop.stopped);
  }

  private async advance() {
    if (!this.options.simulated || this.options.dialer.kind !== 'simulated') return;
    await this.giveWay();
    await advanceSimulatedCalls(this.storage, this.options.now(), this.options.simulated, this.options.queuedCallTtlMs);
  }

  /**
   * Claims due calls of up to 50 accounts in one transaction: the hinted ones, or those the due-accounts query finds.
   * Returns whether another claim may find more at once: more accounts were due than one claim takes, accounts were
   * hinted meanwhile or the query was asked for, or calls were put back to wait for their window or ended for the
   * do-not-call list (the calls behind them may be dialable).
   */
  private async claim(): Promise<boolean> {
    const { now: clock, maxConcurrentCalls } = this.options;
    const passStarted = performance.now();
    const now = clock();
    const hinted = this.nextAccounts();
    if (hinted === null) return false;
    let rescheduled = false;
    // An attempt's answering-machine verdict is its own: a later attempt never ends on an earlier one's machine.
    const extra = {
      leaseOwner: this.id,
      leaseExpiresAt: new Date(now.getTime() + this.leaseMs),
      answeredBy: null,
      voicemailLeft: null,
    };
    const { webhooks } = this.options;
    // The call.started deliveries are written leased to this process's worker, which sends them once this commits.
    const lease = webhooks
      ? { eventType: 'call.started', until: new Date(now.getTime() + webhooks.leaseMs) }
      : undefined;
    const {
      locked,
      result,
      leased: handOver,
    } = await this.storage.claims.claimDue(
      hinted.length > 0 ? hinted : { now, maxActive: maxConcurrentCalls, limit: CLAIM_ACCOUNTS_PER_PASS },
      { maxActive: maxConcurrentCalls, now },
      (candidates) => {
        const ready: DialCall[] = [];
        const waiting: { id: string; notBefore: Date }[] = [];
        // Listed after acceptance: ended here, in the claim's transaction, with its call.failed; never dialled.
        const listed: Call[] = [];
        for (const { agentTimezone, agentCallingWindows, onDoNotCallList, ...call } of candidates) {
          if (onDoNotCallList) {
            listed.push(call);
            continue;
          }
          try {
            const windows = callingWindowsSchemaCheck(agentCallingWindows);
            // The callee's zone the call was accepted with, or the agent's as it is now (src/domain/recipient-timezone.ts).
            const zone = windowZoneOf(call, agentTimezone);
            if (isWithinCallingWindow(windows, zone, now)) ready.push(call);
            else waiting.push({ id: call.id, notBefore: nextWindowOpening(windows, zone, now) ?? now });
          } catch (error) {
            // Stored windows or a zone that no longer validate (edited by hand): this call waits, the others go on.
            this.options.log.error(
              { err: error, callId: call.id, agentId: call.agentId },
              'agent calling windows unreadable; call held back',
            );
            waiting.push({ id: call.id, notBefore: new Date(now.getTime() + UNREADABLE_WINDOWS_RETRY_MS) });
          }
        }
        rescheduled = waiting.length > 0 || listed.length > 0;
        // Dated now, once the candidates are read, not when the pass began: a call that ended meanwhile (its slot is
        // what this claim takes) is then never seen to overlap the call that replaces it.
        const claimedAt = clock();
        const { applied, batch } = planCallBatch(
          [
            ...ready.map((call) => ({ call, change: { update: { kind: 'dialing' }, extra } as const })),
            ...listed.map((call) => ({ call, change: { update: { kind: 'failed', reason: 'do_not_call' } } as const })),
          ],
          { now: claimedAt, source: 'dispatcher', lease },
        );
        const voicemail = new Map(
          ready.map(({ id, agentVoicemail, agentVoicemailMessage }) => [id, { agentVoicemail, agentVoicemailMessage }]),
        );
        const dialling = applied
          .filter((a) => a.steps.length > 0 && a.call.status === 'dialing')
          .map((a) => ({ ...a.call, ...voicemail.get(a.call.id)! }));
        return { waiting, batch, result: dialling };
      },
    );
    const claimed = result ?? [];
    // Asked: more accounts may be due than one claim takes. Hinted: the accounts hinted meanwhile, and the query
    // the hints skipped if it was wanted.
    const more =
      hinted.length === 0 ? locked.length === CLAIM_ACCOUNTS_PER_PASS : this.hinted.size > 0 || this.dueQueryWanted;
    // The next claim asks again which accounts are due: more may be due than this one took, or calls behind those
    // put back may be dialable.
    if ((hinted.length === 0 && more) || rescheduled) this.dueQueryWanted = true;
    if (hinted.length === 0 && more && this.loop.leading) this.askForHelp(true);
    else if (hinted.length === 0) this.askForHelp(false);
    if (locked.length === 0) return more;
    if (handOver.length > 0) this.options.webhooks!.take(handOver);
    this.options.onClaimPass?.((performance.now() - passStarted) / 1000);
    const dials: Promise<void>[] = [];
    for (const call of claimed) {
      try {
        this.options.onClaimed?.(call);
      } catch (error) {
        // An observer must never keep a claimed call from being dialled.
        this.options.log.warn({ err: error, callId: call.id }, 'onClaimed observer failed');
      }
      dials.push(this.track(this.dial(call)));
    }
    const { simulated } = this.options;
    if (dials.length > 0 && simulated) {
      // Be on time for the end of the ring and of the talk rather than wait for the next poll. Counted from when the
      // dials are recorded: a simulated call advances only once its provider id is stored, which under load can
      // take longer than the ring.
      void Promise.allSettled(dials).then(() => {
        for (const ms of simulatedWakeups(simulated, claimed)) setTimeout(() => this.advanceSoon(), ms).unref();
      });
    }
    return more || rescheduled;
  }

  /**
   * The hinted accounts (up to a claim's worth) when no wake asked for the due-accounts query; none when one did, and
   * the query answers for the hinted ones too (an account with due calls is in its answer); null when neither.
   */
  private nextAccounts(): string[] | null {
    if (this.dueQueryWanted) {
      this.dueQueryWanted = false;
      this.hinted.clear();
      return [];
    }
    if (this.hinted.size === 0) return null;
    const accounts = [...this.hinted].slice(0, CLAIM_ACCOUNTS_PER_PASS);
    for (const id of accounts) this.hinted.delete(id);
    return accounts;
  }

  /** A follower's hand-off heard through the relay: claims for its accounts, as for one heard by NOTIFY. */
  private handedOver(payload: string) {
    const accepted = acceptedAccounts(payload);
    // Anyone who may connect to Redis can publish: anything but a hand-off is ignored.
    if (accepted === null || accepted.length === 0 || this.loop.stopped) return;
    for (const id of accepted) this.hinted.add(id);
    this.loop.wake();
  }

  /**
   * More accounts are due than a claim takes (true): the other replicas are asked to claim too (they see it within
   * LEAD_RETRY_MS, and claim due accounts until none is left); a claim found less than a claim's worth (false): no
   * longer. The ask is a lock on the leader's connection, not a NOTIFY (the followers do not LISTEN); asking for what
   * is already asked costs nothing.
   */
  private askForHelp(wanted: boolean) {
    void this.loop.askForHelp(wanted);
  }

  /** Keeps `work` until it ends; the returned promise ends with it and never rejects. */
  private track(work: Promise<void>): Promise<void> {
    this.dialing.add(work);
    // Never an unobserved rejection: close-with-grace would stop the whole process for one call's bookkeeping.
    return work
      .catch((error: Error) => this.logs.error('dial work', { err: error }, 'dial work failed'))
      .finally(() => this.dialing.delete(work));
  }

  /** Records the intent to dial before dialling: a call whose intent is recorded is never dialled again. */
  private async dial(call: DialCall) {
    this.ownDials.add(call.id);
    try {
      await this.dialOnce(call);
    } finally {
      this.ownDials.delete(call.id);
    }
  }

  private async dialOnce(call: DialCall) {
    const { dialer, now, log } = this.options;
    let providerCallId: string;
    try {
      await this.options.beforeDial?.(call);
      if (!(await this.intents.add(call.id))) return; // another dispatcher took it over
      ({ providerCallId } = await dialer.dial({
        callId: call.id,
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
          log.error({ err: error, callId: call.id, attempt: call.attempt }, 'dial failed');
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
  private async recover() {
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

  /** Waiting calls past their time to live fail with reason expired. */
  private async expire() {
    const now = this.options.now();
    const ids = await this.storage.claims.expiredCallIds(now);
    if (ids.length === 0) return;
    const expired: CallChange = { update: { kind: 'failed', reason: 'expired' } };
    await transitionCalls(
      this.storage,
      { kind: 'expired', ids, now },
      () => expired,
      this.updateContext(now, 'expiry'),
    );
  }
}
