// An agent's fields as callctl and the dashboard give them: each checked on its own and against the others, read into
// their stored values, and named as the audit log records them. The writes are agents.ts's.
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
  parseConsentRequired,
  parseMaxAttempts,
  parseRetryOn,
  parseRetryWaits,
  reachSettingsProblem,
  settledSettings,
  voicemailMessageProblem,
  type ReachSettings,
} from '../domain/agent-settings.js';
import {
  DEFAULT_HANDOFF,
  givenHandoffFields,
  handoffInputProblem,
  handoffProblem,
  storedPairs,
  type HandoffInput,
} from '../domain/hand-off-settings.js';
import type { AgentFields } from '../storage/index.js';
import {
  DEFAULT_RETRY_WAITS_MINUTES,
  VOICEMAIL_POLICIES,
  WINDOW_TIMEZONES,
  type VoicemailPolicy,
  type WindowTimezone,
} from '../../schemas/vocabulary.js';
import { storedAgentFields, type StoredAgent } from './agent-stored.js';
import { AdminError } from './errors.js';

/**
 * An agent's fields as callctl and the dashboard give them (callctl's words: windows as "<days> HH:MM-HH:MM", the
 * policies by name; the retry settings as text or as values). A field left out keeps its default on a create and its
 * value on an update.
 */
export interface AgentInput extends HandoffInput {
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
  /** Triggers must carry `consent`: "on"/"off" (callctl, the form) or a boolean. */
  consentRequired?: string | boolean | undefined;
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
    (input.voicemail === undefined ? null : oneOf('voicemail', input.voicemail, VOICEMAIL_POLICIES)) ??
    (input.consentRequired === undefined ? null : settingProblem(() => parseConsentRequired(input.consentRequired!)));
  if (problem) return problem;
  const message = typeof voicemailMessage === 'string' ? normalizeVoicemailMessage(voicemailMessage) : null;
  const messageProblem = message === null ? null : voicemailMessageProblem(message);
  if (messageProblem) return messageProblem;
  const handoff = handoffInputProblem(input);
  if (handoff) return handoff;
  // Two settings given that contradict each other (--max-attempts 1 --retry-on busy): wrong whatever is stored.
  const given = givenSettings(input);
  return conflictsOfChange(reachSettingsOf(newAgentFields(input)), given, true)[0]?.message ?? null;
}

/** The settings a change gives, by their AgentInput names. */
const givenSettings = (input: Omit<AgentInput, 'name'>) =>
  new Set(Object.entries(input).flatMap(([key, value]) => (value === undefined ? [] : [key])));

/** agentInputProblem, then whether the settings agree once the missing ones take their defaults (a new agent's). */
export function newAgentProblem(input: Omit<AgentInput, 'name'>): string | null {
  const problem = agentInputProblem(input);
  if (problem) return problem;
  const fields = newAgentFields(input);
  return reachSettingsProblem(reachSettingsOf(fields)) ?? handoffProblem(fields.handoff, fields.sipUri);
}

export const AGENT_NAME_MAX_LENGTH = 200;

function agentNameProblem(name: string): string | null {
  if (!name) return 'An agent needs a name';
  if (name.length > AGENT_NAME_MAX_LENGTH) return `An agent's name has at most ${AGENT_NAME_MAX_LENGTH} characters`;
  const problem = readableNameProblem(name);
  return problem && `An agent's name ${problem}`;
}

/** The stored windows in callctl's words; windows that no longer read (edited by hand) as their raw JSON. */
export function storedWindows(value: unknown): string[] {
  try {
    return callingWindowsSchemaCheck(value).map(formatCallingWindow);
  } catch (error) {
    if (error instanceof CallingWindowError) return [JSON.stringify(value)];
    throw error;
  }
}

/** An agent's fields as the audit log records them (windows in callctl's words). */
export function auditedFields(fields: AgentFields): Record<string, unknown> {
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
    handoff: fields.handoff,
    stream_url: fields.streamUrl,
    stream_parameters: storedPairs(fields.streamParameters),
    sip_uri: fields.sipUri,
    sip_headers: storedPairs(fields.sipHeaders),
    consent_required: fields.consentRequired,
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
  if (input.consentRequired !== undefined) fields.consentRequired = parseConsentRequired(input.consentRequired);
  return { ...fields, ...givenHandoffFields(input) };
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
    consentRequired: false,
    ...DEFAULT_HANDOFF,
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
export function agentFields(input: CreateAgentInput): AgentFields {
  const problem = agentNameProblem(input.name.trim()) ?? newAgentProblem(input);
  if (problem) throw new AdminError(problem);
  return newAgentFields(input);
}

/**
 * An agent's fields once `input` is applied to its stored ones, checked, with the fields that change (audited names),
 * or an AdminError saying what is wrong (callctl's words).
 */
export function updatedAgentFields(agent: StoredAgent, input: AgentInput) {
  const single = (input.name === undefined ? null : agentNameProblem(input.name.trim())) ?? agentInputProblem(input);
  if (single) throw new AdminError(single);
  const stored = storedAgentFields(agent);

  // A setting the change makes inapplicable and does not give returns to its neutral value (--window none: queue, in
  // the agent's zone); one it gives that cannot apply is refused. A contradiction between settings it leaves alone
  // (stored before these rules, or by hand) does not block an edit of other fields.
  const given = givenSettings(input);
  const fields = settledFields({ ...stored, ...givenFields(input) }, given);
  const conflict = conflictsOfChange(reachSettingsOf(fields), given)[0];
  if (conflict) throw new AdminError(conflict.message);
  // A SIP hand-off without its address, when the change gives either (a row stored so by hand blocks nothing else).
  const handoffGiven = input.handoff !== undefined || input.sipUri !== undefined;
  const handoff = handoffGiven ? handoffProblem(fields.handoff, fields.sipUri) : null;
  if (handoff) throw new AdminError(handoff);
  const before = auditedFields(stored);
  const changes = Object.fromEntries(
    Object.entries(auditedFields(fields)).filter(
      ([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key]),
    ),
  );
  return { fields, changes };
}
