// Calling rules (PRODUCT.md, "Calling within the law"), for callctl and the dashboard alike: read an account's settings
// (an agency's own; a client's agency's, read-only, and the client's own narrower hours), change an agency's (on or
// off, rule sets, kinds of call, the cap per callee, consent required), and add, replace or remove an own rule of
// hours, or replace them all at once (the agency's, or a client's: by the agency's users and by the client's own).
// Only an agency's users (and the operator) change an agency's settings; an account outside the actor's reach is one
// that does not exist. Every change is audited, with its before and after, in the transaction that makes it (the row
// locked meanwhile); without an actor (test fixtures) a change is the operator's and audits nothing.
import { CALL_KINDS, type AgencyCallingRuleData } from '../../schemas/calling-rules.js';
import { OWN_RULES_MAX, type AgencyCallingRulesData } from '../../schemas/compliance.js';
import { agencyRulesOf, clientRulesOf, RULES_VERSION } from '../compliance/policy.js';
import type { Repositories, Storage } from '../storage/index.js';
import { audit, type Actor } from './audit.js';
import {
  CallingRulesProblem,
  nextAgencySettings,
  ownRule,
  ownRuleView,
  ruleName,
  settingsSummary,
  type AgencySettingsInput,
} from './calling-rules-input.js';
import { AdminError } from './errors.js';
import { agencyOf, findAccount, reaches } from './reach.js';

export { CallingRulesProblem, type AgencySettingsInput };

type Account = NonNullable<Awaited<ReturnType<Repositories['accounts']['findAccountById']>>>;

/** An account's calling rules as callctl prints them and the dashboard shows them. */
export type CallingRulesView = {
  account_id: string;
  account_kind: 'agency' | 'client';
  account_name: string;
  agency_id: string;
  agency_name: string;
  /** Whether the actor may change the agency's settings (false for a client's users, and on a client's page). */
  agency_settings_editable: boolean;
  /** The agency's settings (a client's are its agency's), without the own rules: those are below. */
  settings: Omit<AgencyCallingRulesData, 'own_rules'>;
  agency_hours: ReturnType<typeof ownRuleView>[];
  /** A client's own narrower hours, applied beside its agency's while those are on; null for an agency. */
  client_hours: ReturnType<typeof ownRuleView>[] | null;
  rules_version: string;
};

/** JSON with its keys in one order (jsonb gives them back in its own). */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );

/** The calling rules of an account the actor reaches. */
export async function showCallingRules(
  storage: Storage,
  accountId: string,
  actor: Actor | undefined,
): Promise<CallingRulesView> {
  const account = await findAccount(storage, accountId, actor);
  const agency = await agencyOf(storage, account);
  const { own_rules: agencyRules, ...settings } = agencyRulesOf(agency.callingRules);
  return {
    account_id: account.id,
    account_kind: account.kind,
    account_name: account.name,
    agency_id: agency.id,
    agency_name: agency.name,
    agency_settings_editable: account.kind === 'agency' && reaches(actor, agency),
    settings,
    agency_hours: agencyRules.map(ownRuleView),
    client_hours: account.kind === 'client' ? clientRulesOf(account.callingRules).own_rules.map(ownRuleView) : null,
    rules_version: RULES_VERSION,
  };
}

/** The account, refused when it is a client: its agency's settings are changed on the agency. */
async function agencyToChange(storage: Repositories, accountId: string, actor: Actor | undefined) {
  const account = await findAccount(storage, accountId, actor);
  if (account.kind !== 'agency')
    throw new AdminError(
      `${account.id} is a client: its calling rules are its agency's (${account.agencyId ?? 'none'}), changed there; a client adds only narrower hours of its own`,
    );
  return account;
}

/**
 * Changes an agency's settings (absent fields are kept); audited as calling_rules_changed with the before and after,
 * unless nothing changed. A change of the kinds of call carries over to every own rule (the agency's and its
 * clients'), which govern every call of the agency.
 */
export async function setCallingRules(
  storage: Storage,
  input: { accountId: string; settings: AgencySettingsInput; actor?: Actor; now: Date },
) {
  const agency = await agencyToChange(storage, input.accountId, input.actor);
  const changed = await storage.transaction(async (tx) => {
    const before = agencyRulesOf((await tx.accounts.lockCallingRules(agency.id))?.callingRules ?? null);
    const after = nextAgencySettings(before, input.settings);
    if (canonical(after) === canonical(before)) return false;
    await tx.accounts.setCallingRules(agency.id, after);
    // Switched off: the calls the rules hold are dialled as before, now (their windows still apply), not at the
    // moment the rules would have allowed.
    if (before.enabled && !after.enabled) await tx.accounts.releaseHeldCalls(agency.id, input.now);
    if (after.call_kinds.join() !== before.call_kinds.join())
      for (const client of await tx.accounts.lockClientsCallingRules(agency.id)) {
        const own = clientRulesOf(client.callingRules).own_rules;
        const kinds = [...after.call_kinds];
        await tx.accounts.setCallingRules(client.id, { own_rules: own.map((r) => ({ ...r, applies_to: kinds })) });
      }
    if (input.actor)
      await audit(tx, agency.id, input.actor, 'calling_rules_changed', input.now, {
        before: settingsSummary(before),
        after: settingsSummary(after),
      });
    return true;
  });
  return { ...(await showCallingRules(storage, agency.id, input.actor)), changed };
}

/** The own rules of `account` and how to store them again (an agency's inside its settings; a client's alone). */
function ownRulesOf(account: Account, stored: unknown) {
  if (account.kind === 'agency') {
    const settings = agencyRulesOf(stored);
    return {
      rules: settings.own_rules,
      stored: (rules: AgencyCallingRuleData[]) => ({ ...settings, own_rules: rules }),
    };
  }
  return { rules: clientRulesOf(stored).own_rules, stored: (rules: AgencyCallingRuleData[]) => ({ own_rules: rules }) };
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The kinds the agency's calls are, which an own rule applies to (read, not locked: a change of them rewrites every own
 * rule under its locks). `stored`: the account's own stored rules, locked.
 */
async function ruleKinds(tx: Repositories, account: Account, agency: Account, stored: unknown) {
  const kinds =
    account.kind === 'agency'
      ? agencyRulesOf(stored).call_kinds
      : agencyRulesOf((await tx.accounts.findAccountById(agency.id))?.callingRules ?? null).call_kinds;
  return kinds.length > 0 ? kinds : [...CALL_KINDS];
}

/** What an own rule is made of, as written (see calling-rules-input.ts: days as a list, ranges or daily). */
export interface OwnHoursInput {
  name: string;
  days: string | readonly string[];
  from: string;
  to: string;
}

/**
 * Adds an own rule of hours to the account (an agency's, or a client's narrower ones); `replace` replaces the rule of
 * that name instead (refused when there is none). Names are unique per account (any case), at most OWN_RULES_MAX.
 * Audited as calling_hours_added or calling_hours_replaced, with the rule in words before and after.
 */
export async function putCallingHours(
  storage: Storage,
  input: { accountId: string; hours: OwnHoursInput; replace?: boolean; actor?: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId, input.actor);
  const agency = await agencyOf(storage, account);
  const rule = await storage.transaction(async (tx) => {
    const locked = await tx.accounts.lockCallingRules(account.id);
    const rule = ownRule(input.hours, await ruleKinds(tx, account, agency, locked?.callingRules ?? null));
    const own = ownRulesOf(account, locked?.callingRules ?? null);
    const index = own.rules.findIndex((r) => sameName(r.name, rule.name));
    if (input.replace && index < 0) throw new CallingRulesProblem(`There is no rule named "${rule.name}"`, 'name');
    if (!input.replace && index >= 0)
      throw new CallingRulesProblem(
        `There is already a rule named "${own.rules[index]!.name}": choose another name, or remove it first`,
        'name',
      );
    if (!input.replace && own.rules.length >= OWN_RULES_MAX)
      throw new CallingRulesProblem(
        `An account has at most ${OWN_RULES_MAX} rules of its own: remove one before adding another`,
        'name',
      );
    const rules = index >= 0 ? own.rules.map((r, i) => (i === index ? rule : r)) : [...own.rules, rule];
    await tx.accounts.setCallingRules(account.id, own.stored(rules));
    if (input.actor)
      await audit(
        tx,
        account.id,
        input.actor,
        index >= 0 ? 'calling_hours_replaced' : 'calling_hours_added',
        input.now,
        {
          name: rule.name,
          before: index >= 0 ? ownRuleView(own.rules[index]!).hours : null,
          after: ownRuleView(rule).hours,
        },
      );
    return rule;
  });
  return { account_id: account.id, replaced: input.replace === true, rule: ownRuleView(rule) };
}

/** Removes the account's own rule named `name` (any case); `removed` false when there is none (nothing audited). */
export async function removeCallingHours(
  storage: Storage,
  input: { accountId: string; name: string; actor?: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId, input.actor);
  const name = ruleName(input.name);
  const removed = await storage.transaction(async (tx) => {
    const locked = await tx.accounts.lockCallingRules(account.id);
    const own = ownRulesOf(account, locked?.callingRules ?? null);
    const found = own.rules.find((r) => sameName(r.name, name));
    if (!found) return null;
    await tx.accounts.setCallingRules(account.id, own.stored(own.rules.filter((r) => r !== found)));
    if (input.actor)
      await audit(tx, account.id, input.actor, 'calling_hours_removed', input.now, {
        name: found.name,
        before: ownRuleView(found).hours,
        after: null,
      });
    return found;
  });
  return { account_id: account.id, name: removed?.name ?? name, removed: removed !== null };
}

/**
 * Replaces all the account's own rules of hours (an agency's, or a client's narrower ones) by `hours`, in their order
 * ([]: none); names unique (any case), at most OWN_RULES_MAX. Audited rule by rule in today's words: a name gone as
 * calling_hours_removed, a new one as calling_hours_added, a name kept with other hours as calling_hours_replaced;
 * `changed` false (nothing written or audited) when they were these already.
 */
export async function setOwnCallingHours(
  storage: Storage,
  input: { accountId: string; hours: readonly OwnHoursInput[]; actor?: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId, input.actor);
  const agency = await agencyOf(storage, account);
  if (input.hours.length > OWN_RULES_MAX)
    throw new CallingRulesProblem(`An account has at most ${OWN_RULES_MAX} rules of its own`, 'name');
  const changed = await storage.transaction(async (tx) => {
    const locked = await tx.accounts.lockCallingRules(account.id);
    const kinds = await ruleKinds(tx, account, agency, locked?.callingRules ?? null);
    const rules = input.hours.map((hours) => ownRule(hours, kinds));
    rules.forEach((rule, i) => {
      if (rules.findIndex((r) => sameName(r.name, rule.name)) !== i)
        throw new CallingRulesProblem(`Two rules are named "${rule.name}": names are unique`, 'name');
    });
    const own = ownRulesOf(account, locked?.callingRules ?? null);
    if (canonical(own.rules) === canonical(rules)) return false;
    await tx.accounts.setCallingRules(account.id, own.stored(rules));
    if (!input.actor) return true;
    const hoursOf = (rule: AgencyCallingRuleData | undefined) => (rule ? ownRuleView(rule).hours : null);
    for (const before of own.rules) {
      const after = rules.find((r) => sameName(r.name, before.name));
      if (hoursOf(after) === hoursOf(before)) continue;
      const action = after ? 'calling_hours_replaced' : 'calling_hours_removed';
      await audit(tx, account.id, input.actor, action, input.now, {
        name: after?.name ?? before.name,
        before: hoursOf(before),
        after: hoursOf(after),
      });
    }
    for (const rule of rules.filter((r) => !own.rules.some((o) => sameName(o.name, r.name))))
      await audit(tx, account.id, input.actor, 'calling_hours_added', input.now, {
        name: rule.name,
        before: null,
        after: hoursOf(rule),
      });
    return true;
  });
  return { account_id: account.id, changed };
}
