// A call's consent and decision records as stored (calls.consent, calls.compliance: jsonb), read for showing and
// exporting: the shapes of schemas/compliance.ts, but a row edited by hand (or written by an older release) may hold
// anything, so each reader keeps what has the expected shape and leaves the rest out rather than throwing.
import type { ComplianceRecordData, ConsentData } from '../../schemas/compliance.js';

type Candidate = ComplianceRecordData['candidates'][number];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The stored consent record, or null when there is none (or it has no type or source). */
export function storedConsent(value: unknown): ConsentData | null {
  if (!isObject(value)) return null;
  const type = text(value.type);
  const obtainedAt = text(value.obtained_at);
  const source = text(value.source);
  if (type === null || obtainedAt === null || source === null) return null;
  const evidence = text(value.evidence_url);
  return {
    type: type as ConsentData['type'],
    obtained_at: obtainedAt,
    source,
    ...(evidence === null ? {} : { evidence_url: evidence }),
  };
}

function storedCandidate(value: unknown): Candidate | null {
  if (!isObject(value)) return null;
  return {
    region: text(value.region) ?? '?',
    timezone: text(value.timezone) ?? '?',
    local_time: text(value.local_time) ?? '?',
    allowed: value.allowed === true,
    rule: text(value.rule),
  };
}

function storedCap(value: unknown): ComplianceRecordData['cap'] {
  if (!isObject(value) || typeof value.count !== 'number' || typeof value.limit !== 'number') return null;
  return {
    count: value.count,
    limit: value.limit,
    window: text(value.window) ?? '24h',
    scope: value.scope === 'account' ? 'account' : 'agency',
  };
}

/** One stored decision record, or null when it has no verdict. */
function storedRecord(value: unknown, index: number): ComplianceRecordData | null {
  if (!isObject(value)) return null;
  const verdict = value.verdict;
  if (verdict !== 'allowed' && verdict !== 'held' && verdict !== 'refused') return null;
  const list = (v: unknown) => (Array.isArray(v) ? (v as unknown[]) : []);
  return {
    attempt: typeof value.attempt === 'number' ? value.attempt : index + 1,
    checked_at: text(value.checked_at) ?? '',
    verdict,
    reasons: list(value.reasons).filter((r): r is string => typeof r === 'string'),
    rules_version: text(value.rules_version) ?? '',
    candidates: list(value.candidates)
      .map(storedCandidate)
      .filter((c): c is Candidate => c !== null),
    cap: storedCap(value.cap),
    do_not_call: value.do_not_call === 'listed' ? 'listed' : 'clear',
    consent:
      value.consent === 'on_record' || value.consent === 'missing' || value.consent === 'not_required'
        ? value.consent
        : 'not_required',
  };
}

/** The stored decision records, oldest first (the last is the current attempt's); none when there are none. */
export function storedRecords(value: unknown): ComplianceRecordData[] {
  if (!Array.isArray(value)) return [];
  return (value as unknown[]).map(storedRecord).filter((r): r is ComplianceRecordData => r !== null);
}

/** The last record's first reason (why the call is held now), or null. */
export function holdReason(value: unknown): string | null {
  return storedRecords(value).at(-1)?.reasons[0] ?? null;
}
