// The Calling rules page's model: what src/views/pages/calling-rules.eta reads. An agency's settings (a form for its
// users on its own page; in words on a client's page and for a client's users), the caps the laws set themselves, the
// own hours of the agency and of a client (add and remove), and the law's rules in force with their citations.
import type { FastifyRequest } from 'fastify';
import { showCallingRules, type CallingRulesView } from '../../admin/calling-rules.js';
import { RULE_NAME_MAX } from '../../admin/calling-rules-input.js';
import { DAY_NAMES } from '../../../schemas/calling-window.js';
import { CALL_KINDS, type CallingRulesData } from '../../../schemas/calling-rules.js';
import { CAP_PER_DAY_MAX, CAP_PER_WEEK_MAX, OWN_RULES_MAX, RULE_SETS } from '../../../schemas/compliance.js';
import rulesFile from '../../compliance/calling-rules.json' with { type: 'json' };
import type { AccountInScope } from '../../storage/index.js';
import type { FieldProblems } from '../form-problem.js';
import { lawRuleHours, capWords, KIND_WORDS, RULE_SET_WORDS } from '../format/calling-rules.js';
import type { PageData } from '../page-models.js';
import type { KeysOf, Problem, SectionAccount } from './model-parts.js';

const RULES = rulesFile as CallingRulesData;

interface Choice {
  value: string;
  label: string;
  checked: boolean;
}
interface HoursRow {
  name: string;
  hours: string;
}

export type CallingRulesModel = {
  account: SectionAccount;
  /** The page: /dashboard/calling-rules or a client's. */
  base: string;
  agencyName: string;
  /** The agency's settings as a form (its users on its own page); else in words only. */
  editable: boolean;
  /** An agency user on a client's page: where the agency's settings are changed. */
  agencyHref: string | null;
  settings: {
    enabled: boolean;
    ruleSets: Choice[];
    kinds: (Choice & { hint: string })[];
    cap24h: string;
    cap7d: string;
    capScope: string;
    consentRequired: boolean;
    /** The settings in words (the read-only view, and above the form). */
    words: { state: string; ruleSets: string; kinds: string; cap: string; consent: string };
    problem: Problem;
    fields: FieldProblems;
  };
  presets: { region: string; text: string; href: string }[];
  agencyHours: HoursRow[];
  /** A client's own hours; null on an agency's page. */
  clientHours: HoursRow[] | null;
  /** The add form (its values as sent back after a refusal) and its problems. */
  hours: { name: string; days: Choice[]; from: string; to: string; problem: Problem; fields: FieldProblems };
  /** Whose own hours the forms change, in words. */
  hoursOf: string;
  canAddHours: boolean;
  rulesInForce: { id: string; region: string; hours: string; citation: string; href: string }[];
  limits: { ownRulesMax: number; nameMax: number; cap24Max: number; cap7Max: number };
};

/** The fields calling-rules.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CALLING_RULES_FIELDS = [
  'account',
  'base',
  'agencyName',
  'editable',
  'agencyHref',
  'settings',
  'presets',
  'agencyHours',
  'clientHours',
  'hours',
  'hoursOf',
  'canAddHours',
  'rulesInForce',
  'limits',
] as const satisfies readonly KeysOf<CallingRulesModel>[];

/** The two places the page is: the viewer's own account's, and (agency users) a client's. */
export interface RulesPlace {
  prefix: string;
  managed: 'own' | 'client';
  param?: string;
  base(accountId: string): string;
}

export const OWN_RULES: RulesPlace = {
  prefix: '/calling-rules',
  managed: 'own',
  base: () => '/dashboard/calling-rules',
};

export const CLIENT_RULES: RulesPlace = {
  prefix: '/clients/:id/calling-rules',
  // Only a client of the viewer's agency: the agency's own id is no client (404, like any other).
  managed: 'client',
  param: 'id',
  base: (accountId) => `/dashboard/clients/${accountId}/calling-rules`,
};

/** The settings form as sent (shown again after a refusal), or as stored. */
export interface SettingsSent {
  enabled: boolean;
  ruleSets: string[];
  kinds: string[];
  cap24h: string;
  cap7d: string;
  capScope: string;
  consentRequired: boolean;
}

export interface RulesPageInput {
  settings?: { sent: SettingsSent; problem: string | null; fields: FieldProblems };
  hours?: { name: string; days: string[]; from: string; to: string; problem: string | null; fields: FieldProblems };
}

function sentOf(view: CallingRulesView): SettingsSent {
  const { settings } = view;
  return {
    enabled: settings.enabled,
    ruleSets: [...settings.rule_sets],
    kinds: [...settings.call_kinds],
    cap24h: settings.cap ? String(settings.cap.per_24h) : '',
    cap7d: settings.cap?.per_7d ? String(settings.cap.per_7d) : '',
    capScope: settings.cap?.scope ?? 'agency',
    consentRequired: settings.consent_required,
  };
}

function wordsOf(view: CallingRulesView) {
  const { settings } = view;
  return {
    state: settings.enabled
      ? 'On: every call of the agency and its clients is checked before each attempt.'
      : 'Off: calls are dialled as before; nothing is checked.',
    ruleSets: settings.rule_sets.map((set) => RULE_SET_WORDS[set]).join('; ') || 'None: only the own hours below',
    kinds: settings.call_kinds.map((kind) => KIND_WORDS[kind].label).join(', '),
    cap: capWords(settings.cap),
    consent: settings.consent_required ? 'Required on every trigger' : 'Not required (an agent may still require it)',
  };
}

/** The page of `account` (the viewer's own, or a client's an agency user manages). */
export async function rulesPage(
  request: FastifyRequest,
  account: AccountInScope,
  place: RulesPlace,
  input: RulesPageInput = {},
): Promise<PageData<'calling-rules'>> {
  const view = await request.admin.run(showCallingRules, account.id, request.admin.actor);
  const sent = input.settings?.sent ?? sentOf(view);
  const sets = view.settings.rule_sets as readonly string[];
  const inForce = RULES.rules.filter((rule) => sets.some((set) => rule.region.split('-')[0] === set.toUpperCase()));
  const own = view.client_hours ?? view.agency_hours;
  const hours = input.hours ?? { name: '', days: [], from: '', to: '', problem: null, fields: {} };
  const onClient = account.kind === 'client';
  return {
    title: onClient && place.managed === 'client' ? `Calling rules of ${account.name}` : 'Calling rules',
    account: { id: account.id, name: account.name, kind: account.kind },
    base: place.base(account.id),
    agencyName: view.agency_name,
    editable: view.agency_settings_editable && place.managed === 'own',
    agencyHref: onClient && request.scope.kind === 'agency' ? OWN_RULES.base(view.agency_id) : null,
    settings: {
      enabled: sent.enabled,
      ruleSets: RULE_SETS.map((set) => ({
        value: set,
        label: RULE_SET_WORDS[set],
        checked: sent.ruleSets.includes(set),
      })),
      kinds: CALL_KINDS.map((kind) => ({
        value: kind,
        label: KIND_WORDS[kind].label,
        hint: KIND_WORDS[kind].hint,
        checked: sent.kinds.includes(kind),
      })),
      cap24h: sent.cap24h,
      cap7d: sent.cap7d,
      capScope: sent.capScope,
      consentRequired: sent.consentRequired,
      words: wordsOf(view),
      problem: input.settings?.problem ?? null,
      fields: input.settings?.fields ?? {},
    },
    presets: RULES.rules.flatMap((rule) =>
      rule.cap
        ? [
            {
              region: rule.region,
              text: `${rule.cap.count} per ${rule.cap.window_hours} h${rule.cap.scope === 'same_subject' ? ' on the same subject' : ''} (${rule.applies_to.map((k) => KIND_WORDS[k].label.toLowerCase()).join(' and ')})`,
              href: rule.citation.official_url ?? rule.citation.url,
            },
          ]
        : [],
    ),
    agencyHours: view.agency_hours.map(({ name, hours }) => ({ name, hours })),
    clientHours: view.client_hours?.map(({ name, hours }) => ({ name, hours })) ?? null,
    hours: {
      name: hours.name,
      days: DAY_NAMES.map((day) => ({ value: day, label: day, checked: hours.days.includes(day) })),
      from: hours.from,
      to: hours.to,
      // With the form hidden (the most rules), a field's problem is shown above where it would be.
      problem: hours.problem ?? (own.length < OWN_RULES_MAX ? null : (Object.values(hours.fields)[0] ?? null)),
      fields: hours.fields,
    },
    hoursOf: onClient ? `${account.name}'s own hours (beside the agency's)` : "The agency's own hours",
    canAddHours: own.length < OWN_RULES_MAX,
    rulesInForce: inForce.map((rule) => ({
      id: rule.id,
      region: rule.region,
      hours: lawRuleHours(rule),
      citation: `${rule.citation.law}, ${rule.citation.section}`,
      href: rule.citation.official_url ?? rule.citation.url,
    })),
    limits: {
      ownRulesMax: OWN_RULES_MAX,
      nameMax: RULE_NAME_MAX,
      cap24Max: CAP_PER_DAY_MAX,
      cap7Max: CAP_PER_WEEK_MAX,
    },
  };
}
