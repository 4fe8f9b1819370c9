// The call page's "Calling rules" section: the trigger's consent record, the declared region of the callee, and the
// decision record of each attempt (what was checked, the verdict and why), as call.eta shows them.
import { storedConsent, storedRecords } from '../../domain/stored-compliance.js';
import {
  capWords,
  consentTypeWords,
  CONSENT_CHECK_WORDS,
  DO_NOT_CALL_WORDS,
  evidenceHref,
  VERDICT_WORDS,
} from '../format/compliance.js';
import type { ShownTimes } from '../format/shown-times.js';

export interface CallComplianceView {
  /** The trigger's consent record; null when it gave none. */
  consent: {
    type: string;
    obtainedAt: string;
    source: string;
    /** The evidence's https link; null when none (or not https: then `evidenceText`). */
    evidenceHref: string | null;
    evidenceText: string | null;
  } | null;
  /** The trigger's recipient_region (ISO 3166-2), or null. */
  region: string | null;
  /** Each attempt's decision record, oldest first. */
  records: {
    attempt: number;
    verdict: string;
    tone: 'ok' | 'wait' | 'bad';
    checkedAt: string;
    reasons: string[];
    candidates: { region: string; timezone: string; localTime: string; allowed: string; rule: string }[];
    cap: string | null;
    doNotCall: string;
    consent: string;
    rulesVersion: string;
  }[];
}

/** A stored time as the page writes times; one that is no time, as stored. */
function shownTime(text: string, times: ShownTimes): string {
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? text : times.time(at);
}

/** The section's model, or null when the call has no consent, region nor record (rules off when it was placed). */
export function callCompliance(
  call: { consent: unknown; compliance: unknown; recipientRegion: string | null },
  times: ShownTimes,
): CallComplianceView | null {
  const consent = storedConsent(call.consent);
  const records = storedRecords(call.compliance);
  if (!consent && records.length === 0 && !call.recipientRegion) return null;
  const href = evidenceHref(consent?.evidence_url);
  return {
    consent: consent && {
      type: consentTypeWords(consent.type),
      obtainedAt: shownTime(consent.obtained_at, times),
      source: consent.source,
      evidenceHref: href,
      evidenceText: href ? null : (consent.evidence_url ?? null),
    },
    region: call.recipientRegion,
    records: records.map((r) => ({
      attempt: r.attempt,
      verdict: VERDICT_WORDS[r.verdict].text,
      tone: VERDICT_WORDS[r.verdict].tone,
      checkedAt: shownTime(r.checked_at, times),
      reasons: r.reasons,
      candidates: r.candidates.map((c) => ({
        region: c.region,
        timezone: c.timezone,
        localTime: c.local_time,
        allowed: c.allowed ? 'Allowed' : 'Not allowed',
        rule: c.rule ?? '-',
      })),
      cap: capWords(r.cap),
      doNotCall: DO_NOT_CALL_WORDS[r.do_not_call],
      consent: CONSENT_CHECK_WORDS[r.consent],
      rulesVersion: r.rules_version || '-',
    })),
  };
}
