// The calling rules' records in words, for the call page and the Calls list: the kinds of consent, the verdicts, the
// cap, the do-not-call and consent checks of a decision record (schemas/compliance.ts).
import type { ComplianceRecordData, ConsentData } from '../../../schemas/compliance.js';

/** The kinds of consent, as people say them. */
export const CONSENT_TYPE_WORDS: Record<ConsentData['type'], string> = {
  express_written: 'Prior express written consent',
  express: 'Prior express consent',
  established_business_relationship: 'Established business relationship',
  inquiry: 'The callee’s own inquiry',
};

/** A stored kind of consent in words (one edited by hand into another: as stored). */
export function consentTypeWords(type: string): string {
  return (CONSENT_TYPE_WORDS as Record<string, string>)[type] ?? type;
}

/** Each verdict in words, and its badge's tone (the words carry the meaning; the colour only repeats it). */
export const VERDICT_WORDS: Record<ComplianceRecordData['verdict'], { text: string; tone: 'ok' | 'wait' | 'bad' }> = {
  allowed: { text: 'Allowed: dialled', tone: 'ok' },
  held: { text: 'Held: not dialled yet', tone: 'wait' },
  refused: { text: 'Refused: never dialled', tone: 'bad' },
};

/** The record's cap in words: "2 of at most 3 dial attempts in 24 hours, counted across the agency"; none: null. */
export function capWords(cap: ComplianceRecordData['cap']): string | null {
  if (!cap) return null;
  const hours = /^(\d+)h$/.exec(cap.window)?.[1];
  const window = hours === '168' ? '7 days' : hours ? `${hours} hours` : cap.window;
  const across = cap.scope === 'agency' ? 'across the agency and its clients' : 'for this account';
  return `${cap.count} of at most ${cap.limit} dial attempts to the number in ${window}, counted ${across}`;
}

export const DO_NOT_CALL_WORDS: Record<ComplianceRecordData['do_not_call'], string> = {
  clear: 'Clear: on no do-not-call list',
  listed: 'Listed: the number is on a do-not-call list',
};

export const CONSENT_CHECK_WORDS: Record<ComplianceRecordData['consent'], string> = {
  on_record: 'On record',
  not_required: 'Not required',
  missing: 'Missing, and required',
};

/** An evidence link the page may show as a link: https only (anything else is shown as text). */
export function evidenceHref(url: string | undefined): string | null {
  return url && /^https:\/\/[^\s]+$/.test(url) ? url : null;
}
