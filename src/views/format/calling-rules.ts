// Calling rules in words, for the Calling rules page: the rule sets, the kinds of call, the cap per number, and a law's
// hours (its days and ranges, the days it allows no call, its holidays).
import { ownRuleView } from '../../admin/calling-rules-input.js';
import type { CallingRuleData } from '../../../schemas/calling-rules.js';
import type { CalleeCapData, RuleSetName } from '../../../schemas/compliance.js';

export const RULE_SET_WORDS: Record<RuleSetName, string> = {
  us: 'United States: federal (TCPA) and state laws',
  ca: "Canada: the CRTC's Unsolicited Telecommunications Rules and provincial laws",
};

export const KIND_WORDS = {
  telephone_solicitation: {
    label: 'Telephone solicitation',
    hint: 'Calls to sell, lease or rent something, as the laws define them',
  },
  telemarketing: { label: 'Telemarketing', hint: 'The same under a telemarketing law (FTC TSR, CRTC rules)' },
  automated: {
    label: 'Automated',
    hint: 'Dialled automatically, or an artificial voice: an AI voice agent’s calls are',
  },
} as const;

/** The agency's cap per number in words. */
export function capWords(cap: CalleeCapData | null): string {
  if (!cap) return 'None of the agency’s own (the laws’ own caps still apply)';
  const week = cap.per_7d === null ? '' : ` and ${cap.per_7d} per 7 days`;
  const scope = cap.scope === 'agency' ? 'counted across the agency and all its clients' : 'counted per account';
  return `${cap.per_24h} per 24 hours${week}, ${scope}`;
}

/** A law's hours: its days and ranges, the days with no call, its holidays. */
export function lawRuleHours(rule: CallingRuleData): string {
  const parts = [ownRuleView({ ...rule, name: rule.id }).hours];
  if (rule.days_not_allowed.length > 0) parts.push(`no calls on ${rule.days_not_allowed.join(', ')}`);
  if (rule.holidays.length > 0)
    parts.push(`no calls on ${rule.holidays.length === 1 ? '1 holiday' : `${rule.holidays.length} holidays`}`);
  return parts.join('; ');
}
