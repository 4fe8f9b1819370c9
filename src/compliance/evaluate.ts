// Whether a call may be dialled now where the callee may be: every applicable rule (national, the region's own,
// the agency's) in every candidate region and time zone must allow it; if one does not, the first moment all do.
import type { AgencyCallingRuleData, CallKind, CallingRuleData } from '../../schemas/calling-rules.js';
import type { Static } from '@sinclair/typebox';
import type { Candidate } from './candidates.js';
import { checkRule, minutesOf, nextOpening, type EngineRule } from './rule-check.js';
import { DAY_MS, clockText, localClock, zoneOf, type Zone } from './zone-clock.js';

export type CallKindName = Static<typeof CallKind>;

/** How far ahead nextAllowedAt is looked for by default: two weeks cover any weekend and holiday run of the data. */
export const DEFAULT_SEARCH_DAYS = 14;

export interface RuleSet {
  /** The law rules in force for the agency (calling-rules.json, filtered to the rule sets it chose). */
  rules: readonly CallingRuleData[];
  /** The agency's own narrower rules (and a client's), applied in every candidate. */
  agencyRules?: readonly AgencyCallingRuleData[];
}

/** What was checked in one candidate region and zone, for the decision record. */
export interface CandidateCheck {
  region: string;
  timezone: string;
  /** The callee's wall clock there, "YYYY-MM-DD HH:MM". */
  local_time: string;
  allowed: boolean;
  /** The rule that decided: the first that refused, else the one whose hours end soonest; null when none applies. */
  rule: string | null;
  /** Every rule in force there, in the order checked. */
  rules: string[];
}

export interface Evaluation {
  allowed: boolean;
  /** `at` when allowed; else the first moment every candidate allows, or null when none within the search. */
  nextAllowedAt: Date | null;
  /** Why not, one line per refusing rule and zone ("US-FL: 8:00–20:00, 07:42 now in America/New_York"). */
  reasons: string[];
  candidates: CandidateCheck[];
}

interface Constraint {
  region: string;
  timezone: string;
  zone: Zone;
  rule: EngineRule;
}

/** A law's rule governs a region's candidates when it names the region or the region's country. */
function governs(rule: CallingRuleData, region: string): boolean {
  return rule.region === region || rule.region === region.split('-')[0];
}

/** A rule applies to a call that has every kind it lists. */
const appliesTo = (listed: readonly string[], kinds: ReadonlySet<string>) => listed.every((kind) => kinds.has(kind));

function constraintsFor(candidates: readonly Candidate[], set: RuleSet, kinds: ReadonlySet<string>): Constraint[] {
  const agency: EngineRule[] = (set.agencyRules ?? [])
    .filter((rule) => appliesTo(rule.applies_to, kinds))
    .map((rule) => ({ ...rule, id: `agency:${rule.name}`, label: `Agency rule "${rule.name}"` }));
  const out: Constraint[] = [];
  for (const candidate of candidates) {
    // The region's own rules first: the stricter is the one a reason names first.
    const laws: EngineRule[] = set.rules
      .filter((rule) => governs(rule, candidate.region) && appliesTo(rule.applies_to, kinds))
      .sort((a, b) => Number(b.region === candidate.region) - Number(a.region === candidate.region))
      .map((rule) => ({ ...rule, label: rule.region }));
    for (const timezone of candidate.timezones) {
      const zone = zoneOf(timezone);
      for (const rule of [...laws, ...agency]) out.push({ region: candidate.region, timezone, zone, rule });
    }
  }
  return out;
}

/** The record of every candidate and zone at one instant, and the reasons of those that refuse. */
function checkAll(candidates: readonly Candidate[], constraints: readonly Constraint[], at: number) {
  const checks: CandidateCheck[] = [];
  const reasons: string[] = [];
  for (const candidate of candidates) {
    for (const timezone of candidate.timezones) {
      const clock = localClock(zoneOf(timezone), at);
      const check: CandidateCheck = {
        region: candidate.region,
        timezone,
        local_time: `${clock.date} ${clockText(clock.minute)}`,
        allowed: true,
        rule: null,
        rules: [],
      };
      let soonestEnd = Infinity;
      for (const c of constraints) {
        if (c.region !== candidate.region || c.timezone !== timezone) continue;
        const verdict = checkRule(c.rule, timezone, clock);
        if (verdict.allowed && !verdict.inEffect) continue;
        check.rules.push(c.rule.id);
        if (!verdict.allowed) {
          reasons.push(verdict.reason);
          if (check.allowed) check.rule = c.rule.id;
          check.allowed = false;
        } else if (check.allowed && verdict.range !== null) {
          const end = minutesOf(verdict.range.end);
          if (end < soonestEnd) [soonestEnd, check.rule] = [end, c.rule.id];
        }
      }
      checks.push(check);
    }
  }
  return { checks, reasons: [...new Set(reasons)] };
}

/**
 * The first instant in [from, limit] that every constraint allows, or null. Each round moves to the latest of the
 * refusing constraints' own next openings: every instant skipped is refused by the constraint that moved furthest,
 * so none allowed by all is passed over.
 */
function firstAllowed(constraints: readonly Constraint[], from: number, limit: number): number | null {
  let t = from;
  for (let round = 0; round < 10_000; round++) {
    let next = t;
    for (const c of constraints) {
      const opening = nextOpening(c.rule, c.zone, c.timezone, t, limit);
      if (opening === null) return null;
      if (opening > next) next = opening;
    }
    if (next === t) return t;
    t = next;
  }
  return null;
}

/**
 * Whether a call of `kinds` may be dialled at `at` to a callee who may be in any of `candidates`: the strictest
 * wins (every applicable rule in every candidate region and each of its zones must allow it), read on the
 * callee's wall clock there (DST-correct). When not, nextAllowedAt is the first moment within `searchDays` that
 * every one allows. No candidate (a number of no known place) leaves nothing to check: allowed.
 */
export function evaluate(
  candidates: readonly Candidate[],
  set: RuleSet,
  at: Date,
  kinds: readonly CallKindName[],
  searchDays = DEFAULT_SEARCH_DAYS,
): Evaluation {
  const t = at.getTime();
  if (Number.isNaN(t)) throw new RangeError('Invalid date');
  const constraints = constraintsFor(candidates, set, new Set(kinds));
  const { checks, reasons } = checkAll(candidates, constraints, t);
  const allowed = checks.every((check) => check.allowed);
  const next = allowed ? t : firstAllowed(constraints, t, t + searchDays * DAY_MS);
  return { allowed, nextAllowedAt: next === null ? null : new Date(next), reasons, candidates: checks };
}
