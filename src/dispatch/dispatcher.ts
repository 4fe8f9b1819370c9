// The dispatcher, one per process: claims due calls first-in first-out per account without exceeding the account's
// concurrency across all replicas (the account row is locked while slots are counted and taken), dials them under a
// lease, recovers calls whose claimer died, expires calls that waited too long, and advances simulated calls.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Call, PrismaClient } from '../generated/prisma/client.js';
import { CALLS_CHANNEL } from '../calls/accept-call.js';
import { applyCallUpdate, applyLocked } from '../calls/transition.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import type { Dialer } from './dialer.js';
import { advanceSimulatedCalls } from './simulated-dialer.js';
import { WakeableLoop } from '../jobs/wakeable-loop.js';

export interface DispatcherOptions {
  prisma: PrismaClient;
  databaseUrl: string;
  dialer: Dialer;
  now: () => Date;
  log: FastifyBaseLogger;
  maxConcurrentCalls: number;
  simulated?: { ringMs: number; talkMs: number };
  /** How long a claim protects a call between claim and dial. */
  leaseMs?: number;
  /** Poll interval: the fallback for missed notifications, window openings and expiries. */
  pollMs?: number;
  /** Test hook: runs after a claim commits and before the dial (a crash there must not lose the call). */
  beforeDial?: (call: Call) => Promise<void> | void;
  /** Observes each call this dispatcher claimed, after the claim commits (metrics: dispatch latency). */
  onClaimed?: (call: Call) => void;
}

const CLAIM_ACCOUNTS_PER_PASS = 50;

export class Dispatcher {
  readonly id = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly loop: WakeableLoop;
  private readonly dialing = new Set<Promise<void>>();

  constructor(private readonly options: DispatcherOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.loop = new WakeableLoop({
      name: 'dispatcher', databaseUrl: options.databaseUrl, channel: CALLS_CHANNEL, pollMs: options.pollMs ?? 250, log: options.log, pass: () => this.tick(),
    });
  }

  async start() {
    await this.loop.start();
  }

  async stop() {
    await this.loop.stop();
    await Promise.allSettled([...this.dialing]);
  }

  /** Runs a pass now, or right after the current one. */
  wake() {
    this.loop.wake();
  }

  /** Runs passes until none is pending, and waits for their dials: tests use it after moving an injected clock. */
  async settle() {
    await this.loop.settle();
    await Promise.allSettled([...this.dialing]);
  }

  /** One full pass. */
  async tick() {
    await this.expire();
    await this.recover();
    while ((await this.claim()) > 0 && !this.loop.stopped);
    if (this.options.simulated && this.options.dialer.kind === 'simulated') {
      await advanceSimulatedCalls(this.options.prisma, this.options.now(), this.options.simulated);
    }
  }

  /** Claims due calls of up to 50 accounts in one transaction; returns how many were claimed. */
  private async claim(): Promise<number> {
    const { prisma, now: clock, maxConcurrentCalls } = this.options;
    const now = clock();
    const claimed = await prisma.$transaction(async (tx) => {
      const due = await tx.$queryRaw<{ account_id: string }[]>`
        SELECT DISTINCT account_id FROM calls
         WHERE status = 'initiated' AND not_before <= ${now} LIMIT ${CLAIM_ACCOUNTS_PER_PASS}`;
      if (due.length === 0) return [];
      // Another replica working on an account holds its lock: skip it rather than wait.
      const accounts = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM accounts WHERE id = ANY(${due.map((d) => d.account_id)}::uuid[]) FOR UPDATE SKIP LOCKED`;
      const calls: Call[] = [];
      for (const { id: accountId } of accounts) {
        const [{ active }] = await tx.$queryRaw<[{ active: number }]>`
          SELECT count(*)::int AS active FROM calls WHERE account_id = ${accountId}::uuid AND status IN ('dialing', 'in_progress')`;
        const free = maxConcurrentCalls - active;
        if (free <= 0) continue;
        const candidates = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM calls WHERE account_id = ${accountId}::uuid AND status = 'initiated' AND not_before <= ${now}
           ORDER BY created_at, id LIMIT ${free} FOR UPDATE SKIP LOCKED`;
        const rows = await tx.call.findMany({ where: { id: { in: candidates.map((c) => c.id) } }, include: { agent: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
        for (const { agent, ...call } of rows) {
          const windows = callingWindowsSchemaCheck(agent.callingWindows);
          if (!isWithinCallingWindow(windows, agent.timezone, now)) {
            // Its window closed while it waited for a slot: it waits for the next opening instead.
            await tx.call.update({ where: { id: call.id }, data: { notBefore: nextWindowOpening(windows, agent.timezone, now) ?? now } });
            continue;
          }
          const { call: updated } = await applyLocked(tx, call, { kind: 'dialing' }, { now, source: 'dispatcher' }, {
            leaseOwner: this.id,
            leaseExpiresAt: new Date(now.getTime() + this.leaseMs),
          });
          calls.push(updated);
        }
      }
      return calls;
    });
    for (const call of claimed) {
      try {
        this.options.onClaimed?.(call);
      } catch (error) {
        // An observer must never keep a claimed call from being dialled.
        this.options.log.warn({ err: error, callId: call.id }, 'onClaimed observer failed');
      }
      this.track(this.dial(call));
    }
    return claimed.length;
  }

  private track(work: Promise<void>) {
    this.dialing.add(work);
    // Never an unobserved rejection: close-with-grace would stop the whole process for one call's bookkeeping.
    void work.catch((error: Error) => this.options.log.error({ err: error }, 'dial work failed')).finally(() => this.dialing.delete(work));
  }

  /** Records the intent to dial before dialling: a call whose intent is recorded is never dialled again. */
  private async dial(call: Call) {
    const { prisma, dialer, now, log } = this.options;
    try {
      await this.options.beforeDial?.(call);
      const intent = await prisma.call.updateMany({
        where: { id: call.id, status: 'dialing', leaseOwner: this.id, dialAttempts: 0 },
        data: { dialAttempts: { increment: 1 } },
      });
      if (intent.count !== 1) return; // another dispatcher took it over
      const { providerCallId } = await dialer.dial({
        callId: call.id, to: call.phoneNumber, from: call.fromNumber, agentId: call.agentId, name: call.name, email: call.email,
      });
      await prisma.call.updateMany({ where: { id: call.id, leaseOwner: this.id }, data: { providerCallId, leaseOwner: null, leaseExpiresAt: null } });
      if (this.options.simulated) {
        // Be on time for the end of the ring rather than wait for the next poll.
        setTimeout(() => this.wake(), this.options.simulated.ringMs + 5).unref();
        setTimeout(() => this.wake(), this.options.simulated.ringMs + this.options.simulated.talkMs + 10).unref();
      }
    } catch (error) {
      try {
        // Only the dispatcher still holding the lease may fail the call: after a takeover it is someone else's.
        const stillMine = await prisma.call.count({ where: { id: call.id, leaseOwner: this.id, status: 'dialing' } });
        if (!stillMine) return;
        log.error({ err: error, callId: call.id }, 'dial failed');
        await applyCallUpdate(prisma, call.id, { kind: 'failed', reason: 'provider_error' }, { now: now(), source: 'dispatcher' });
      } catch (bookkeeping) {
        // The database is gone too: the lease runs out and recover() settles the call (dial once, or provider_error).
        log.error({ err: bookkeeping, dialError: error, callId: call.id }, 'dial failed and could not be recorded; left to lease recovery');
      }
    }
  }

  /**
   * Calls claimed by a dispatcher that died: never dialled (no intent) -> dial them now, once; intent recorded but no
   * provider id -> the outcome is unknown and dialling again could ring the callee twice, so they fail.
   */
  private async recover() {
    const { prisma, now: clock } = this.options;
    const now = clock();
    const stale = await prisma.call.findMany({
      where: { status: 'dialing', providerCallId: null, leaseExpiresAt: { lt: now } },
      take: 100,
    });
    for (const call of stale) {
      const taken = await prisma.call.updateMany({
        where: { id: call.id, status: 'dialing', providerCallId: null, leaseExpiresAt: { lt: now } },
        data: { leaseOwner: this.id, leaseExpiresAt: new Date(now.getTime() + this.leaseMs) },
      });
      if (taken.count !== 1) continue;
      this.options.log.warn({ callId: call.id, dialAttempts: call.dialAttempts }, 'recovering a call whose dispatcher died');
      if (call.dialAttempts === 0) this.track(this.dial({ ...call, leaseOwner: this.id }));
      else await applyCallUpdate(prisma, call.id, { kind: 'failed', reason: 'provider_error' }, { now, source: 'dispatcher' });
    }
  }

  /** Waiting calls past their time to live fail with reason expired. */
  private async expire() {
    const { prisma, now: clock } = this.options;
    const now = clock();
    const expired = await prisma.call.findMany({ where: { status: 'initiated', expiresAt: { lte: now } }, select: { id: true }, take: 500 });
    for (const { id } of expired) await applyCallUpdate(prisma, id, { kind: 'failed', reason: 'expired' }, { now, source: 'expiry' });
  }
}
