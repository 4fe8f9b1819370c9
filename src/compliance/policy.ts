// An agency's calling-rules settings (and its client's narrower hours), as stored, turned into what the engine checks
// for one call: the law rules of the chosen rule sets, the own rules of both, the call's kinds, the caps (the agency's
// and the laws' own presets for the regions the callee may be in) and whether consent is required. The one reading
// shared by the trigger (consent, the `reject` policy) and the dispatcher (holds and caps before every attempt).
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  AgencyCallingRules,
  ClientCallingRules,
  DEFAULT_AGENCY_CALLING_RULES,
  type AgencyCallingRulesData,
  type ClientCallingRulesData,
  type RuleSetName,
} from '../../schemas/compliance.js';
import type { AgencyCallingRuleData, CallingRuleData, CallingRulesData } from '../../schemas/calling-rules.js';
import rulesFile from './calling-rules.json' with { type: 'json' };
import { candidatesFor, type Candidate } from './candidates.js';
import { evaluate, type CallKindName, type Evaluation, type RuleSet } from './evaluate.js';
import { geoCarrierPrefixData } from './prefix-data-geo-carrier.js';

const RULES = rulesFile as CallingRulesData;

/** The version of the rule set in force, for the decision record. */
export const RULES_VERSION: string = RULES.version;

// Compiled once: the settings are checked on every trigger of an agency whose rules are on and on every claim, where
// TypeBox's interpreted Value.Check cost 30 µs a time (a compiled check: about 1 µs).
const isAgencyRules = TypeCompiler.Compile(AgencyCallingRules);
const isClientRules = TypeCompiler.Compile(ClientCallingRules);

/** The settings stored on an agency (accounts.calling_rules), or the defaults when none (off) or unreadable. */
export function agencyRulesOf(stored: unknown): AgencyCallingRulesData {
  if (stored === null || stored === undefined) return DEFAULT_AGENCY_CALLING_RULES;
  if (isAgencyRules.Check(stored)) return stored;
  // Stored by hand and no longer valid: read as the strictest the agency could have meant, never as off.
  return { ...DEFAULT_AGENCY_CALLING_RULES, enabled: true };
}

/** A client's own narrower rules (accounts.calling_rules of a client), or none. */
export function clientRulesOf(stored: unknown): ClientCallingRulesData {
  return isClientRules.Check(stored) ? stored : { own_rules: [] };
}

const inSet = (rule: CallingRuleData, sets: readonly RuleSetName[]) =>
  sets.some((set) => rule.region === set.toUpperCase() || rule.region.startsWith(`${set.toUpperCase()}-`));

/** A cap to check: the agency's, or a law's preset for a region the callee may be in. */
export interface CapCheck {
  limit: number;
  windowHours: number;
  /** The rule id of a law's cap; null for the agency's own. */
  rule: string | null;
}

/** What the engine checks for the calls of one account, from its agency's settings and its own (a client's). */
export interface CallPolicy {
  /** False: the agency has not switched the rules on; nothing is checked and nothing recorded. */
  enabled: boolean;
  set: RuleSet;
  kinds: CallKindName[];
  /** The agency's cap (null: none); the laws' presets are added per call by capsFor. */
  cap: AgencyCallingRulesData['cap'];
  consentRequired: boolean;
}

/** The policy for an account: its agency's settings (`agency`) and, for a client, its own (`client`). */
export function callPolicy(agency: unknown, client?: unknown): CallPolicy {
  const settings = agencyRulesOf(agency);
  const own: AgencyCallingRuleData[] = [...settings.own_rules, ...clientRulesOf(client ?? null).own_rules];
  return {
    enabled: settings.enabled,
    set: { rules: RULES.rules.filter((rule) => inSet(rule, settings.rule_sets)), agencyRules: own },
    kinds: [...settings.call_kinds],
    cap: settings.cap,
    consentRequired: settings.enabled && settings.consent_required,
  };
}

/** The places a callee of `phoneNumber` may be (throws RecipientRegionError for an unknown declared region). */
export function candidatesOf(phoneNumber: string, recipientRegion: string | null | undefined): Candidate[] {
  return candidatesFor(phoneNumber, recipientRegion ?? undefined, geoCarrierPrefixData());
}

/** Whether the rules allow a dial at `at`, and when they next do. */
export function checkHours(policy: CallPolicy, candidates: readonly Candidate[], at: Date): Evaluation {
  return evaluate(candidates, policy.set, at, policy.kinds);
}

/**
 * Every cap that applies to a call to these candidates: the agency's (24 hours, and 7 days when set) and each law
 * rule's own cap (Florida's three per 24 hours) where the rule governs a candidate and its kinds match the call's.
 */
export function capsFor(policy: CallPolicy, candidates: readonly Candidate[]): CapCheck[] {
  const caps: CapCheck[] = [];
  if (policy.cap !== null) {
    caps.push({ limit: policy.cap.per_24h, windowHours: 24, rule: null });
    if (policy.cap.per_7d !== null) caps.push({ limit: policy.cap.per_7d, windowHours: 24 * 7, rule: null });
  }
  const kinds = new Set<string>(policy.kinds);
  for (const rule of policy.set.rules) {
    if (rule.cap === undefined || !rule.applies_to.every((kind) => kinds.has(kind))) continue;
    const governs = candidates.some((c) => c.region === rule.region || c.region.split('-')[0] === rule.region);
    if (governs) caps.push({ limit: rule.cap.count, windowHours: rule.cap.window_hours, rule: rule.id });
  }
  return caps;
}
