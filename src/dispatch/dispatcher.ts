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
import { acceptedAccounts, acceptedPayloads, CALLS_CHANNEL, notifiedAccounts, type Storage } from '../storage/index.js';
import { CoalescedNotify } from '../jobs/coalesced-notify.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';
import { planClaim } from './claim-plan.js';
import { DialWork } from './dials.js';
import type { DispatcherOptions } from './dispatcher-options.js';
import { Housekeeping } from './housekeeping.js';
import { simulatedWakeups } from './simulated-dialer.js';

export type { DispatcherOptions, WebhookHandOff } from './dispatcher-options.js';

const CLAIM_ACCOUNTS_PER_PASS = 50;

export class Dispatcher {
  readonly id = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly loop: WakeableLoop;
  /** The sweeps (when due: on the poll) and the simulated calls' next steps, beside the claims. */
  private readonly housekeeping: Housekeeping;
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
  /** The dials of the calls this dispatcher claimed or took over, and their bookkeeping. */
  private readonly dialWork: DialWork;
  private readonly storage: Storage;
  /** The database going away fails the bookkeeping of every call in flight at once. */
  private readonly logs: ThrottledLog;

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
        this.housekeeping.sweep();
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
          this.housekeeping.sweep();
        },
      },
    });
    this.handOff = new CoalescedNotify(options.storage, CALLS_CHANNEL, options.log, {
      payloads: acceptedPayloads,
      ...(options.relay ? { relay: options.relay } : {}),
    });
    this.dialWork = new DialWork(this.id, this.leaseMs, options, this.logs, this.loop);
    this.housekeeping = new Housekeeping(options, this.dialWork, this.loop, this.logs);
  }

  async start() {
    await this.loop.start();
    if (this.loop.leading) this.housekeeping.sweep();
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
    await this.dialWork.settle();
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
    this.housekeeping.sweep();
    await this.housekeeping.settle();
    await this.loop.settle();
    await this.dialWork.settle();
  }

  /** One full pass in this order: the sweeps, the claims, the simulated calls' next steps. */
  async tick() {
    await this.giveWay();
    await this.housekeeping.expire();
    await this.dialWork.recover();
    this.dueQueryWanted = true;
    await this.claims();
    await this.housekeeping.advance();
  }

  private giveWay() {
    return this.options.requestsFirst?.() ?? Promise.resolve();
  }

  /** Claims until nothing more is due (the usual pass: one claim transaction and done). */
  private async claims() {
    do await this.giveWay();
    while ((await this.claim()) && !this.loop.stopped);
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
    const {
      locked,
      result,
      leased: handOver,
    } = await this.storage.claims.claimDue(
      hinted.length > 0 ? hinted : { now, maxActive: maxConcurrentCalls, limit: CLAIM_ACCOUNTS_PER_PASS },
      { maxActive: maxConcurrentCalls, now },
      async (candidates, ledger) => {
        const plan = await planClaim(candidates, ledger, now, this.id, this.leaseMs, this.options);
        rescheduled = plan.rescheduled;
        return plan;
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
      dials.push(this.dialWork.track(this.dialWork.dial(call)));
    }
    const { simulated } = this.options;
    if (dials.length > 0 && simulated) {
      // Be on time for the end of the ring and of the talk rather than wait for the next poll. Counted from when the
      // dials are recorded: a simulated call advances only once its provider id is stored, which under load can
      // take longer than the ring.
      void Promise.allSettled(dials).then(() => {
        for (const ms of simulatedWakeups(simulated, claimed))
          setTimeout(() => this.housekeeping.advanceSoon(), ms).unref();
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
}
