// The decision record of one attempt (schemas/compliance.ts ComplianceRecord), as the dispatcher writes it before
// each attempt into calls.compliance: what was checked (the candidates' local times, the tightest cap, the
// do-not-call lists, consent), the verdict and why. Plain TypeScript: the dispatcher's claim builds it in memory.
import type { ComplianceRecordData } from '../../schemas/compliance.js';
import type { CandidateCheck } from './evaluate.js';
import { RULES_VERSION, type CallPolicy, type CapCheck } from './policy.js';

/** calls.compliance keeps the records of this many attempts at most (the latest): a call has a few attempts. */
export const COMPLIANCE_RECORDS_MAX = 20;

export type CapScope = 'agency' | 'account';
export type CapRecord = NonNullable<ComplianceRecordData['cap']>;

/** A cap as counted for one call: the dials within its window, this claim's earlier dials to the number included. */
export interface CapCount {
  cap: CapCheck;
  count: number;
  /** When the number may be dialled again under this cap (the dial that must leave the window first leaves it). */
  nextAt: Date | null;
}

/** The scope a call's caps are counted in: the agency's choice, and the agency's when it set no cap of its own. */
export function capScopeOf(policy: CallPolicy): CapScope {
  return policy.cap?.scope ?? 'agency';
}

/** Whether consent is on record, or needed and missing, or not needed, for the decision record. */
export function consentState(consent: unknown, policy: CallPolicy): ComplianceRecordData['consent'] {
  if (consent !== null && consent !== undefined) return 'on_record';
  return policy.consentRequired ? 'missing' : 'not_required';
}

/** The tightest of the caps counted: the one with the fewest dials left (a full one first), for the record. */
export function tightestCap(counts: readonly CapCount[], scope: CapScope): CapRecord | null {
  let best: CapCount | null = null;
  for (const c of counts) {
    if (best === null || c.cap.limit - c.count < best.cap.limit - best.count) best = c;
  }
  if (best === null) return null;
  return { count: best.count, limit: best.cap.limit, window: `${best.cap.windowHours}h`, scope };
}

/** One line per full cap: "3 dial attempts to this number in the last 24 hours (limit 3, US-FL-...); next at ...". */
export function capReason(c: CapCount): string {
  const source = c.cap.rule ?? 'agency cap';
  const next = c.nextAt === null ? '' : `; next at ${c.nextAt.toISOString()}`;
  return (
    `${c.count} dial attempt${c.count === 1 ? '' : 's'} to this number in the last ${c.cap.windowHours} hours ` +
    `(limit ${c.cap.limit}, ${source})${next}`
  );
}

/** The record of one attempt. */
export function complianceRecord(args: {
  attempt: number;
  at: Date;
  verdict: ComplianceRecordData['verdict'];
  reasons?: string[];
  candidates?: readonly CandidateCheck[];
  cap?: CapRecord | null;
  listed?: boolean;
  consent: ComplianceRecordData['consent'];
}): ComplianceRecordData {
  return {
    attempt: args.attempt,
    checked_at: args.at.toISOString(),
    verdict: args.verdict,
    reasons: args.reasons ?? [],
    rules_version: RULES_VERSION,
    candidates: (args.candidates ?? []).map(({ region, timezone, local_time, allowed, rule }) => ({
      region,
      timezone,
      local_time,
      allowed,
      rule,
    })),
    cap: args.cap ?? null,
    do_not_call: args.listed ? 'listed' : 'clear',
    consent: args.consent,
  };
}

/**
 * calls.compliance with `record` in its attempt's place: the earlier attempts' records kept (oldest first), a record
 * of the same attempt (a hold before it) replaced, and only the latest COMPLIANCE_RECORDS_MAX kept.
 */
export function withRecord(stored: unknown, record: ComplianceRecordData): ComplianceRecordData[] {
  const earlier = (Array.isArray(stored) ? (stored as ComplianceRecordData[]) : []).filter(
    (r) => typeof r === 'object' && r !== null && r.attempt !== record.attempt,
  );
  return [...earlier, record].slice(-COMPLIANCE_RECORDS_MAX);
}
