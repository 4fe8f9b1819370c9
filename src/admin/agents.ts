// Agents (created, edited, archived and restored, never deleted: calls point at them) and the default agent of an
// account, for callctl and the dashboard alike.
import { readableNameProblem } from '../../schemas/text.js';
import { isValidE164 } from '../domain/phone-number.js';
import {
  CallingWindowError,
  callingWindowsSchemaCheck,
  formatCallingWindow,
  parseCallingWindow,
} from '../domain/calling-window.js';
import { canonicalTimeZone } from '../domain/time-zones.js';
import {
  AgentSettingError,
  conflictsOfChange,
  normalizeVoicemailMessage,
  parseMaxAttempts,
  parseRetryOn,
  parseRetryWaits,
  reachSettingsProblem,
  settledSettings,
  voicemailMessageProblem,
  type ReachSettings,
} from '../domain/agent-settings.js';
import type { AgentFields, Storage } from '../storage/index.js';
import {
  DEFAULT_RETRY_WAITS_MINUTES,
  VOICEMAIL_POLICIES,
  WINDOW_TIMEZONES,
  type VoicemailPolicy,
  type WindowTimezone,
} from '../../schemas/vocabulary.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';
import { isUuid } from '../../schemas/uuid.js';

/**
 * An agent's fields as callctl and the dashboard give them (callctl's words: windows as "<days> HH:MM-HH:MM", the
 * policies by name; the retry settings as text or as values). A field left out keeps its default on a create and its
 * value on an update.
 */
export interface AgentInput {
  name?: string | undefined;
  /** E.164; null: none (the agent cannot place calls). */
  phone?: string | null | undefined;
  /** An IANA name in any case, or a link: stored by its canonical name (america/new_york: America/New_York). */
  timezone?: string | undefined;
  windows?: string[] | undefined;
  outsideWindow?: string | undefined;
  /** 1 to 5 ("Try up to N times"). */
  maxAttempts?: string | number | undefined;
  /** Outcomes dialled again: a list, or "busy,no_answer" ("none": none). */
  retryOn?: string | readonly string[] | undefined;
  /** Minutes before attempt 2, 3, ...: a list, or "30, 120, 1440". */
  retryWaits?: string | readonly number[] | undefined;
  voicemail?: string | undefined;
  /** The message left on a machine; empty or null: none. */
  voicemailMessage?: string | null | undefined;
  windowTimezone?: string | undefined;
}

export interface CreateAgentInput extends AgentInput {
  accountId: string;
  name: string;
}

const OUTSIDE_WINDOW_POLICIES = ['queue', 'reject'] as const satisfies readonly AgentFields['outsideWindowPolicy'][];

const oneOf = (flag: string, value: string, allowed: readonly string[]) =>
  allowed.includes(value)
    ? null
    : `--${flag} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}, not "${value}"`;

/** The setting's problem in words: what `read` throws, or null. */
function settingProblem(read: () => unknown): string | null {
  try {
    read();
    return null;
  } catch (error) {
    if (error instanceof AgentSettingError || error instanceof CallingWindowError) return error.message;
    throw error;
  }
}

/**
 * What is wrong with the fields given, each on its own, checked without the database (callctl reports it as a usage
 * error), or null. How the settings agree with each other is newAgentProblem's, or the update's (it needs the agent).
 */
export function agentInputProblem(input: Omit<AgentInput, 'name'>): string | null {
  if (typeof input.phone === 'string' && !isValidE164(input.phone))
    return `Invalid phone number "${input.phone}": use E.164, e.g. +14155552671`;
  if (input.timezone !== undefined && canonicalTimeZone(input.timezone) === null)
    return `Unknown time zone "${input.timezone}": use an IANA name such as America/New_York`;
  const policy = oneOf('outside-window', input.outsideWindow ?? 'queue', OUTSIDE_WINDOW_POLICIES);
  if (policy) return policy;
  for (const window of input.windows ?? []) {
    const problem = settingProblem(() => parseCallingWindow(window));
    if (problem) return problem;
  }
  if (input.windowTimezone !== undefined) {
    const problem = oneOf('window-timezone', input.windowTimezone, WINDOW_TIMEZONES);
    if (problem) return problem;
  }
  const { maxAttempts, retryOn, retryWaits, voicemailMessage } = input;
  const problem =
    (maxAttempts === undefined ? null : settingProblem(() => parseMaxAttempts(maxAttempts))) ??
    (retryOn === undefined ? null : settingProblem(() => parseRetryOn(retryOn))) ??
    (retryWaits === undefined ? null : settingProblem(() => parseRetryWaits(retryWaits))) ??
    (input.voicemail === undefined ? null : oneOf('voicemail', input.voicemail, VOICEMAIL_POLICIES));
  if (problem) return problem;
  const message = typeof voicemailMessage === 'string' ? normalizeVoicemailMessage(voicemailMessage) : null;
  const messageProblem = message === null ? null : voicemailMessageProblem(message);
  if (messageProblem) return messageProblem;
  // Two settings given that contradict each other (--max-attempts 1 --retry-on busy): wrong whatever is stored.
  const given = givenSettings(input);
  return conflictsOfChange(reachSettingsOf(newAgentFields(input)), given, true)[0]?.message ?? null;
}

/** The settings a change gives, by their AgentInput names. */
const givenSettings = (input: Omit<AgentInput, 'name'>) =>
  new Set(Object.entries(input).flatMap(([key, value]) => (value === undefined ? [] : [key])));

/** agentInputProblem, then whether the settings agree once the missing ones take their defaults (a new agent's). */
export function newAgentProblem(input: Omit<AgentInput, 'name'>): string | null {
  return agentInputProblem(input) ?? reachSettingsProblem(reachSettingsOf(newAgentFields(input)));
}

export const AGENT_NAME_MAX_LENGTH = 200;

function agentNameProblem(name: string): string | null {
  if (!name) return 'An agent needs a name';
  if (name.length > AGENT_NAME_MAX_LENGTH) return `An agent's name has at most ${AGENT_NAME_MAX_LENGTH} characters`;
  const problem = readableNameProblem(name);
  return problem && `An agent's name ${problem}`;
}

/** The stored windows in callctl's words; windows that no longer read (edited by hand) as their raw JSON. */
function storedWindows(value: unknown): string[] {
  try {
    return callingWindowsSchemaCheck(value).map(formatCallingWindow);
  } catch (error) {
    if (error instanceof CallingWindowError) return [JSON.stringify(value)];
    throw error;
  }
}

/** An agent's fields as the audit log records them (windows in callctl's words). */
function auditedFields(fields: AgentFields): Record<string, unknown> {
  return {
    name: fields.name,
    phone_number: fields.phoneNumber,
    timezone: fields.timezone,
    calling_windows: storedWindows(fields.callingWindows),
    outside_window_policy: fields.outsideWindowPolicy,
    window_timezone: fields.windowTimezone,
    max_attempts: fields.maxAttempts,
    retry_on: fields.retryOn,
    retry_waits_minutes: fields.retryWaitsMinutes,
    voicemail: fields.voicemail,
    voicemail_message: fields.voicemailMessage,
  };
}

/** The given fields, read into their stored values (each already checked by agentInputProblem). */
function givenFields(input: AgentInput): Partial<AgentFields> {
  const fields: Partial<AgentFields> = {};
  if (input.name !== undefined) fields.name = input.name.trim();
  if (input.phone !== undefined) fields.phoneNumber = input.phone;
  // Stored by its canonical name only, whatever the spelling given (see canonicalTimeZone).
  if (input.timezone !== undefined) fields.timezone = canonicalTimeZone(input.timezone) ?? input.timezone;
  if (input.windows !== undefined) fields.callingWindows = input.windows.map(parseCallingWindow) as object[];
  if (input.outsideWindow !== undefined)
    fields.outsideWindowPolicy = input.outsideWindow as AgentFields['outsideWindowPolicy'];
  if (input.windowTimezone !== undefined) fields.windowTimezone = input.windowTimezone as WindowTimezone;
  if (input.maxAttempts !== undefined) fields.maxAttempts = parseMaxAttempts(input.maxAttempts);
  if (input.retryOn !== undefined) fields.retryOn = parseRetryOn(input.retryOn);
  if (input.retryWaits !== undefined) fields.retryWaitsMinutes = parseRetryWaits(input.retryWaits);
  if (input.voicemail !== undefined) fields.voicemail = input.voicemail as VoicemailPolicy;
  if (input.voicemailMessage !== undefined)
    fields.voicemailMessage =
      input.voicemailMessage === null ? null : normalizeVoicemailMessage(input.voicemailMessage);
  return fields;
}

/** A new agent's fields: the given ones over the defaults (today's behaviour: one attempt, no detection). */
function newAgentFields(input: AgentInput): AgentFields {
  return {
    name: '',
    phoneNumber: null,
    timezone: 'UTC',
    callingWindows: [],
    outsideWindowPolicy: 'queue',
    windowTimezone: 'agent',
    maxAttempts: 1,
    retryOn: [],
    retryWaitsMinutes: [...DEFAULT_RETRY_WAITS_MINUTES],
    voicemail: 'off',
    voicemailMessage: null,
    ...givenFields(input),
  };
}

const reachSettingsOf = (fields: AgentFields): ReachSettings => ({
  maxAttempts: fields.maxAttempts,
  retryOn: Array.isArray(fields.retryOn) ? fields.retryOn.filter((o) => typeof o === 'string') : [],
  voicemail: fields.voicemail,
  voicemailMessage: fields.voicemailMessage,
  hasWindow: Array.isArray(fields.callingWindows) && fields.callingWindows.length > 0,
  outsideWindow: fields.outsideWindowPolicy,
  windowTimezone: fields.windowTimezone,
});

/** The fields with the settings a change leaves alone but makes inapplicable back at their neutral values. */
function settledFields(fields: AgentFields, given: ReadonlySet<string>): AgentFields {
  const before = reachSettingsOf(fields);
  const settled = settledSettings(before, given);
  return {
    ...fields,
    retryOn: settled.retryOn === before.retryOn ? fields.retryOn : [],
    voicemailMessage: settled.voicemailMessage,
    outsideWindowPolicy: settled.outsideWindow,
    windowTimezone: settled.windowTimezone,
  };
}

/** The checked, normalised fields of a new agent, or an AdminError saying what is wrong (callctl's words). */
function agentFields(input: CreateAgentInput): AgentFields {
  const problem = agentNameProblem(input.name.trim()) ?? newAgentProblem(input);
  if (problem) throw new AdminError(problem);
  return newAgentFields(input);
}

/** A new agent of the account, audited as agent_created when an actor is given (callctl and the dashboard give one). */
export async function createAgent(storage: Storage, input: CreateAgentInput & { now: Date }, actor?: Actor) {
  const account = await findAccount(storage, input.accountId);
  const fields = agentFields(input);
  const now = input.now;
  const agent = await storage.transaction(async (tx) => {
    const row = await tx.agents.insertAgentRow({
      accountId: account.id,
      agencyId: account.kind === 'agency' ? account.id : account.agencyId!,
      ...fields,
    });
    if (actor) await audit(tx, account.id, actor, 'agent_created', now, { agent_id: row.id, ...auditedFields(fields) });
    return row;
  });
  return { id: agent.id, windows: storedWindows(fields.callingWindows) };
}

/** Why an archived agent cannot be made a default agent. */
export const ARCHIVED_DEFAULT = (name: string) => `${name} is archived: restore it before making it the default agent`;

/** Why an agent cannot be an account's default: it is another account's (a client's, for an agency). */
export const NOT_OWN_DEFAULT = (agentId: string, accountId: string) =>
  `Agent ${agentId} does not belong to account ${accountId}: an account's default agent is one of its own agents`;

/**
 * The agent a trigger without agent_id uses: one of the account's own agents (an agency's key may name its clients'
 * agents with agent_id, but its default calls with its own number); audited when an actor is given. Returns the
 * account's id and the agent as checked (the caller needs no second, unscoped read of it).
 */
export async function setDefaultAgent(
  storage: Storage,
  accountId: string,
  agentId: string,
  actor: Actor | undefined,
  now: Date,
) {
  const account = await findAccount(storage, accountId);
  const agent = isUuid(agentId) ? await storage.accounts.findAgentById(agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  if (agent.accountId !== account.id) throw new AdminError(NOT_OWN_DEFAULT(agentId, accountId));
  await storage.transaction(async (tx) => {
    // Under the agent's row lock: an archive of the same agent waits, then sees it is a default and refuses.
    const locked = await tx.agents.lockAgent(agent.id);
    if (locked?.archivedAt) throw new AdminError(ARCHIVED_DEFAULT(agent.name));
    await tx.keys.setDefaultAgentOf(account.id, agent.id, now);
    if (actor)
      await audit(tx, account.id, actor, 'default_agent_changed', now, {
        agent_id: agent.id,
        agent_name: agent.name,
        previous_agent_id: account.defaultAgentId,
      });
  });
  return { accountId: account.id, agent };
}

/**
 * Changes the fields given of an agent (never its account: its calls and the defaults that name it stay as they are),
 * audited as agent_changed with the fields that changed. Its past calls keep their agent and caller ID. Calls waiting
 * for the old calling window are handed back to the dispatcher, which dials them now or waits for the new window.
 * Nothing changed: nothing is written. The dashboard gives every field; callctl's `agent update` only those it names.
 */
export async function updateAgent(storage: Storage, agentId: string, input: AgentInput & { now: Date }, actor?: Actor) {
  const agent = isUuid(agentId) ? await storage.accounts.findAgentById(agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  const single = (input.name === undefined ? null : agentNameProblem(input.name.trim())) ?? agentInputProblem(input);
  if (single) throw new AdminError(single);
  const stored: AgentFields = {
    name: agent.name,
    phoneNumber: agent.phoneNumber,
    timezone: agent.timezone,
    callingWindows: agent.callingWindows as AgentFields['callingWindows'],
    outsideWindowPolicy: agent.outsideWindowPolicy,
    windowTimezone: agent.windowTimezone,
    maxAttempts: agent.maxAttempts,
    retryOn: agent.retryOn as AgentFields['retryOn'],
    retryWaitsMinutes: agent.retryWaitsMinutes as AgentFields['retryWaitsMinutes'],
    voicemail: agent.voicemail,
    voicemailMessage: agent.voicemailMessage,
  };
  // A setting the change makes inapplicable and does not give returns to its neutral value (--window none: queue, in
  // the agent's zone); one it gives that cannot apply is refused. A contradiction between settings it leaves alone
  // (stored before these rules, or by hand) does not block an edit of other fields.
  const given = givenSettings(input);
  const fields = settledFields({ ...stored, ...givenFields(input) }, given);
  const conflict = conflictsOfChange(reachSettingsOf(fields), given)[0];
  if (conflict) throw new AdminError(conflict.message);
  const before = auditedFields(stored);
  const changes = Object.fromEntries(
    Object.entries(auditedFields(fields)).filter(
      ([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key]),
    ),
  );
  const changed = Object.keys(changes);
  const result = { id: agent.id, changed, agent: auditedFields(fields) };
  if (changed.length === 0) return result;
  const now = input.now;
  await storage.transaction(async (tx) => {
    await tx.agents.updateAgentRow(agent.id, fields, now);
    if (changes.calling_windows !== undefined || changes.timezone !== undefined)
      await tx.agents.rescheduleWaitingCalls(agent.id, now);
    if (actor) await audit(tx, agent.accountId, actor, 'agent_changed', now, { agent_id: agent.id, ...changes });
  });
  return result;
}

/** Why the default agent of some accounts cannot be archived (a trigger without agent_id would stop working). */
export const DEFAULT_NOT_ARCHIVED = (name: string, accounts: string[]) =>
  `${name} is the default agent of ${accounts.join(', ')}: make another agent the default first, then archive it`;

/**
 * Archives an agent (`archive`) or restores it, audited as agent_archived or agent_restored. An archived agent keeps
 * its row and its calls (they still show it; calls already accepted are placed as usual), but a new trigger naming it
 * gets 400 "Agent not found" and it cannot be made a default agent. The default agent of an account is not archived:
 * refused with a message saying to choose another default first (clearing the default silently would turn every
 * trigger without agent_id into a 400). Already in the state asked for: nothing is written, `changed` is false.
 */
export async function setAgentArchived(
  storage: Storage,
  agentId: string,
  archive: boolean,
  actor: Actor | undefined,
  now: Date,
): Promise<{ id: string; name: string; archived: boolean; changed: boolean }> {
  const agent = isUuid(agentId) ? await storage.accounts.findAgentById(agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  return storage.transaction(async (tx) => {
    const locked = await tx.agents.lockAgent(agent.id);
    if (!locked) throw new AdminError(`No agent ${agentId}`);
    const result = { id: agent.id, name: agent.name, archived: archive };
    if ((locked.archivedAt !== null) === archive) return { ...result, changed: false };
    if (archive) {
      const defaults = await tx.agents.accountsDefaultingTo(agent.id);
      if (defaults.length > 0)
        throw new AdminError(
          DEFAULT_NOT_ARCHIVED(
            agent.name,
            defaults.map((a) => a.name),
          ),
        );
    }
    await tx.agents.setAgentArchivedAt(agent.id, archive ? now : null, now);
    if (actor)
      await audit(tx, agent.accountId, actor, archive ? 'agent_archived' : 'agent_restored', now, {
        agent_id: agent.id,
        agent_name: agent.name,
      });
    return { ...result, changed: true };
  });
}
