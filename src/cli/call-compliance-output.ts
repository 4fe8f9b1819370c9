// `callctl calls show` for people: the calling rules' part of a call, its declared region, the trigger's consent and
// each attempt's decision record (verdict, reasons, candidates as a table, cap, do-not-call and consent checks). The
// consent's texts are the client's: written escaped, so that none moves the terminal (terminalSafe).
import { storedConsent, storedRecords } from '../domain/stored-compliance.js';
import { table } from './output.js';

/** The lines of the calling rules' part; one line when the call has none of it. */
export function complianceLines(
  region: unknown,
  consentValue: unknown,
  compliance: unknown,
  heldBy: unknown,
  safe: (text: string) => string,
): string[] {
  const consent = storedConsent(consentValue);
  const records = storedRecords(compliance);
  // Nothing to say (the rules off, no consent or region given): no section, as for a call without a result.
  if (!consent && records.length === 0 && typeof region !== 'string') return [];
  const lines = ['calling rules:', `  recipient region: ${typeof region === 'string' ? safe(region) : '-'}`];
  if (typeof heldBy === 'string') lines.push(`  held by: ${heldBy} (until not_before)`);
  if (consent)
    lines.push(
      `  consent: ${safe(consent.type)}, obtained ${safe(consent.obtained_at)}`,
      `    source: ${JSON.stringify(safe(consent.source))}`,
      `    evidence: ${consent.evidence_url ? safe(consent.evidence_url) : '-'}`,
    );
  else lines.push('  consent: (none on record)');
  for (const r of records) {
    const cap = r.cap ? `${r.cap.count} of ${r.cap.limit} in ${r.cap.window} (${r.cap.scope})` : '-';
    lines.push(
      `  attempt ${r.attempt}: ${r.verdict}, checked ${safe(r.checked_at) || '-'}, rules ${safe(r.rules_version) || '-'}`,
      ...(r.reasons.length ? ['    reasons:', ...r.reasons.map((reason) => `      ${safe(reason)}`)] : []),
      `    cap: ${cap}; do not call: ${r.do_not_call}; consent: ${r.consent}`,
    );
    if (r.candidates.length)
      lines.push(
        '    candidates:',
        ...table(
          r.candidates.map((c) => ({
            region: safe(c.region),
            timezone: safe(c.timezone),
            local_time: safe(c.local_time),
            allowed: c.allowed ? 'yes' : 'no',
            rule: c.rule === null ? null : safe(c.rule),
          })),
          undefined,
          '      ',
        ),
      );
  }
  return lines;
}
