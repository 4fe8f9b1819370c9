// The calling rules before every attempt (issue 48), in the claim's transaction: for the calls of the claim that are
// within their agent's window, the hours where the callee may be, then the caps per callee, counted in the dial
// ledger under a lock per (scope, number) so that two replicas never both place the call over a cap. Each call of an
// agency whose rules are on gets its attempt's decision record; a held one waits (held_by, not_before). Rules off:
// nothing but the dial's ledger row (and a stale hold cleared).
import {
  capReason,
  capScopeOf,
  complianceRecord,
  consentState,
  tightestCap,
  withRecord,
  type CapCount,
  type CapScope,
} from '../compliance/decision.js';
import type { Candidate as Place } from '../compliance/candidates.js';
import type { Evaluation } from '../compliance/evaluate.js';
import { callPolicy, candidatesOf, capsFor, checkHours, clientRulesOf, type CallPolicy } from '../compliance/policy.js';
import type { ComplianceRecordData } from '../../schemas/compliance.js';
import type {
  CalleeDial,
  CalleeLedger,
  ClaimCandidate,
  ComplianceWrite,
  DialCount,
  DialCountRequest,
} from '../storage/index.js';
import type { DispatcherOptions } from './dispatcher-options.js';

/** A call whose candidates cannot be read (a stored region no longer known) waits this long before the next try. */
const UNREADABLE_RETRY_MS = 60_000;
const HOUR_MS = 3600_000;

/** What the screening decided: the calls to dial (their compliance as written), the holds and records, the dials. */
export interface Screened<C> {
  ready: C[];
  /** Calls refused by the do-not-call lists, their record added when their agency's rules are on. */
  listed: C[];
  records: ComplianceWrite[];
  /** Held: not dialled now (their records are in `records`). */
  held: number;
}

type Candidate = Omit<ClaimCandidate, 'agentTimezone' | 'agentCallingWindows' | 'onDoNotCallList'>;

/** A call that passed the hours, its caps to count. */
interface Checking {
  policy: CallPolicy;
  evaluation: Evaluation;
  scope: CapScope;
  scopeId: string;
  caps: ReturnType<typeof capsFor>;
}

/** The policy of each (account, listed-for client) of the claim, built once per claim; null when the rules are off. */
function policies() {
  const memo = new Map<string, CallPolicy | null>();
  return (call: Candidate): CallPolicy | null => {
    // The hot path when an agency never switched the rules on: nothing read, nothing built.
    if (call.agencyCallingRules === null || call.agencyCallingRules === undefined) return null;
    const key = `${call.accountId}|${call.listedForAccountId ?? ''}`;
    if (memo.has(key)) return memo.get(key)!;
    let policy: CallPolicy | null = callPolicy(call.agencyCallingRules, call.clientCallingRules);
    if (!policy.enabled) policy = null;
    else if (call.listedForCallingRules !== null && call.listedForCallingRules !== undefined) {
      // The client a call is listed for adds its own narrower hours too.
      const own = clientRulesOf(call.listedForCallingRules).own_rules;
      policy = { ...policy, set: { ...policy.set, agencyRules: [...(policy.set.agencyRules ?? []), ...own] } };
    }
    memo.set(key, policy);
    return policy;
  };
}

const scopeKey = (scope: CapScope, id: string, phone: string) => `${scope}|${id}|${phone}`;
const requestKey = (scope: CapScope, id: string, phone: string, hours: number) =>
  `${scopeKey(scope, id, phone)}|${hours}`;

/**
 * Screens `within` (calls within their window, in the claim's order) and `listed` (on a do-not-call list) under the
 * calling rules at `now`. The dials of the calls let through here count for the calls after them in this claim.
 */
export async function screenClaim<C extends Candidate>(
  within: C[],
  listed: C[],
  now: Date,
  ledger: CalleeLedger,
  options: Pick<DispatcherOptions, 'log'>,
): Promise<Screened<C>> {
  const policyOf = policies();
  const records: ComplianceWrite[] = [];
  const record = (call: C, data: ComplianceRecordData, heldBy: ComplianceWrite['heldBy'], notBefore: Date | null) => {
    const compliance = withRecord(call.compliance, data);
    records.push({ id: call.id, compliance, heldBy, notBefore });
    return { ...call, compliance, heldBy } as C;
  };
  const outListed = listed.map((call) => {
    const policy = policyOf(call);
    if (policy === null) return call;
    const refused = complianceRecord({
      attempt: call.attempt,
      at: now,
      verdict: 'refused',
      reasons: ['The number is on a do-not-call list'],
      listed: true,
      consent: consentState(call.consent, policy),
    });
    return record(call, refused, null, null);
  });

  // First pass: the hours, without the database.
  const checking = new Map<string, Checking>();
  let held = 0;
  for (const call of within) {
    const policy = policyOf(call);
    if (policy === null) continue;
    let evaluation: Evaluation;
    let places: Place[] = [];
    try {
      places = candidatesOf(call.phoneNumber, call.recipientRegion);
      evaluation = checkHours(policy, places, now);
    } catch (error) {
      options.log.error({ err: error, callId: call.id }, 'calling rules could not be checked; call held back');
      evaluation = {
        allowed: false,
        nextAllowedAt: new Date(now.getTime() + UNREADABLE_RETRY_MS),
        reasons: ['The calling rules could not be checked for this call (its region); tried again shortly'],
        candidates: [],
      };
    }
    if (!evaluation.allowed) {
      held++;
      const data = complianceRecord({
        attempt: call.attempt,
        at: now,
        verdict: 'held',
        reasons: evaluation.reasons,
        candidates: evaluation.candidates,
        consent: consentState(call.consent, policy),
      });
      // No moment allowed within the search: it waits until it expires, with its record saying why.
      record(call, data, 'calling_rules', evaluation.nextAllowedAt ?? call.expiresAt);
      continue;
    }
    const scope = capScopeOf(policy);
    const scopeId = scope === 'agency' ? call.ledgerAgencyId : call.accountId;
    checking.set(call.id, { policy, evaluation, scope, scopeId, caps: capsFor(policy, places) });
  }

  // The locks, then the counts in a statement of their own (its snapshot sees every dial the lock's last holder wrote).
  const counts = await countDials(checking, within, now, ledger);

  // Second pass, in the claim's order: the caps, with this claim's earlier dials to the same number.
  const dialledHere = new Map<string, number>();
  const ready: C[] = [];
  for (const call of within) {
    const check = checking.get(call.id);
    const policy = policyOf(call);
    if (policy !== null && check === undefined) continue; // held by the hours
    if (check !== undefined) {
      const added = dialledHere.get(scopeKey(check.scope, check.scopeId, call.phoneNumber)) ?? 0;
      const capCounts = check.caps.map((cap) =>
        capCount(
          cap,
          counts.get(requestKey(check.scope, check.scopeId, call.phoneNumber, cap.windowHours))!,
          added,
          now,
        ),
      );
      const full = capCounts.filter((c) => c.count >= c.cap.limit);
      const common = {
        attempt: call.attempt,
        at: now,
        candidates: check.evaluation.candidates,
        cap: tightestCap(capCounts, check.scope),
        consent: consentState(call.consent, policy!),
      };
      if (full.length > 0) {
        held++;
        const nextAt = new Date(Math.max(...full.map((c) => (c.nextAt ?? call.expiresAt).getTime())));
        record(call, complianceRecord({ ...common, verdict: 'held', reasons: full.map(capReason) }), 'cap', nextAt);
        continue;
      }
      ready.push(record(call, complianceRecord({ ...common, verdict: 'allowed' }), null, null));
    } else if (call.heldBy !== null && call.heldBy !== undefined) {
      // Held while the rules were on, and they are off now: dialled, no longer shown as held.
      records.push({ id: call.id, compliance: call.compliance, heldBy: null, notBefore: null });
      ready.push({ ...call, heldBy: null });
    } else ready.push(call);
    for (const key of [
      scopeKey('agency', call.ledgerAgencyId, call.phoneNumber),
      scopeKey('account', call.accountId, call.phoneNumber),
    ])
      dialledHere.set(key, (dialledHere.get(key) ?? 0) + 1);
  }
  return { ready, listed: outListed, records, held };
}

/** Locks every (scope, number) the checked calls may dial, then counts the dials in each of their caps' windows. */
async function countDials(
  checking: Map<string, Checking>,
  within: Candidate[],
  now: Date,
  ledger: CalleeLedger,
): Promise<Map<string, DialCount>> {
  const counts = new Map<string, DialCount>();
  if (checking.size === 0) return counts;
  const locks = new Set<string>();
  const requests = new Map<string, DialCountRequest>();
  for (const call of within) {
    const check = checking.get(call.id);
    if (check === undefined) continue;
    // Locked even without a cap: a call with one to the same number, on another replica, must count this dial.
    locks.add(`${check.scopeId}:${call.phoneNumber}`);
    for (const cap of check.caps) {
      const key = requestKey(check.scope, check.scopeId, call.phoneNumber, cap.windowHours);
      const known = requests.get(key);
      if (known === undefined)
        requests.set(key, {
          scope: check.scope,
          scopeId: check.scopeId,
          phone: call.phoneNumber,
          windowHours: cap.windowHours,
          limit: cap.limit,
        });
      else known.limit = Math.max(known.limit, cap.limit);
    }
  }
  await ledger.lock([...locks]);
  const asked = [...requests.entries()];
  const answers = await ledger.count(
    asked.map(([, r]) => r),
    now,
  );
  asked.forEach(([key], i) => counts.set(key, answers[i]!));
  return counts;
}

/**
 * A cap's count for one call: the ledger's dials in the window and `added` made earlier in this claim (at `now`). When
 * full, the next moment is when the dial that must leave first leaves: of the dials oldest first, the
 * (count - limit + 1)th, plus the window.
 */
function capCount(cap: CapCount['cap'], counted: DialCount, added: number, now: Date): CapCount {
  const count = counted.count + added;
  if (count < cap.limit) return { cap, count, nextAt: null };
  const k = count - cap.limit + 1;
  const position = k - (counted.count - counted.newest.length);
  const leaving = position <= counted.newest.length ? counted.newest[position - 1]! : now;
  return { cap, count, nextAt: new Date(leaving.getTime() + cap.windowHours * HOUR_MS) };
}

/** The ledger rows of the calls of `screened` that go dialling (`dialling`). */
export function dialsOf(screened: Candidate[], dialling: ReadonlySet<string>): CalleeDial[] {
  return screened
    .filter((c) => dialling.has(c.id))
    .map((c) => ({
      callId: c.id,
      attempt: c.attempt,
      agencyId: c.ledgerAgencyId,
      accountId: c.accountId,
      phoneNumber: c.phoneNumber,
    }));
}
