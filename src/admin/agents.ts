// Agents (created and edited, never deleted: calls point at them) and the default agent of an account, for callctl and
// the dashboard alike.
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../domain/ids.js';
import { readableNameProblem } from '../../schemas/text.js';
import { isValidE164 } from '../domain/phone-number.js';
import {
  CallingWindowError,
  callingWindowsSchemaCheck,
  formatCallingWindow,
  isValidTimeZone,
  parseCallingWindow,
  type CallingWindow,
} from '../domain/calling-window.js';
import { canUseAgent } from '../domain/tenancy.js';
import { findAgentById } from '../storage/accounts.js';
import { insertAgentRow, rescheduleWaitingCalls, updateAgentRow, type AgentFields } from '../storage/agents.js';
import { setDefaultAgentOf } from '../storage/keys.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';

export interface CreateAgentInput {
  accountId: string;
  name: string;
  phone?: string | undefined;
  timezone?: string | undefined;
  windows?: string[] | undefined;
  outsideWindow?: string | undefined;
}

/** What is wrong with an agent's fields, checked without the database (callctl reports it as a usage error), or null. */
export function agentInputProblem(input: Omit<CreateAgentInput, 'accountId' | 'name'>): string | null {
  if (input.phone !== undefined && !isValidE164(input.phone))
    return `Invalid phone number "${input.phone}": use E.164, e.g. +14155552671`;
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) return `Unknown time zone "${timezone}": use an IANA name such as America/New_York`;
  const policy = input.outsideWindow ?? 'queue';
  if (policy !== 'queue' && policy !== 'reject') return `--outside-window must be queue or reject, not "${policy}"`;
  for (const window of input.windows ?? []) {
    try {
      parseCallingWindow(window);
    } catch (error) {
      if (error instanceof CallingWindowError) return error.message;
      throw error;
    }
  }
  return null;
}

export const AGENT_NAME_MAX_LENGTH = 200;

function agentNameProblem(name: string): string | null {
  if (!name) return 'An agent needs a name';
  if (name.length > AGENT_NAME_MAX_LENGTH) return `An agent's name has at most ${AGENT_NAME_MAX_LENGTH} characters`;
  const problem = readableNameProblem(name);
  return problem && `An agent's name ${problem}`;
}

const windowsOf = (fields: AgentFields) =>
  (fields.callingWindows as unknown as CallingWindow[]).map(formatCallingWindow);

/** An agent's fields as the audit log records them (windows in callctl's words). */
function auditedFields(fields: AgentFields): Record<string, unknown> {
  return {
    name: fields.name,
    phone_number: fields.phoneNumber,
    timezone: fields.timezone,
    calling_windows: windowsOf(fields),
    outside_window_policy: fields.outsideWindowPolicy,
  };
}

/** The checked, normalised fields of an agent, or an AdminError saying what is wrong (callctl's words). */
function agentFields(input: Omit<CreateAgentInput, 'accountId'>): AgentFields {
  const name = input.name.trim();
  const problem = agentNameProblem(name) ?? agentInputProblem(input);
  if (problem) throw new AdminError(problem);
  return {
    name,
    phoneNumber: input.phone ?? null,
    timezone: input.timezone ?? 'UTC',
    callingWindows: (input.windows ?? []).map(parseCallingWindow) as object[],
    outsideWindowPolicy: input.outsideWindow === 'reject' ? 'reject' : 'queue',
  };
}

/** A new agent of the account, audited as agent_created when an actor is given (callctl and the dashboard give one). */
export async function createAgent(
  prisma: PrismaClient,
  input: CreateAgentInput & { now?: Date | undefined },
  actor?: Actor,
) {
  const account = await findAccount(prisma, input.accountId);
  const fields = agentFields(input);
  const now = input.now ?? new Date();
  const agent = await prisma.$transaction(async (tx) => {
    const row = await insertAgentRow(tx, {
      accountId: account.id,
      agencyId: account.kind === 'agency' ? account.id : account.agencyId!,
      ...fields,
    });
    if (actor) await audit(tx, account.id, actor, 'agent_created', now, { agent_id: row.id, ...auditedFields(fields) });
    return row;
  });
  return { id: agent.id, windows: windowsOf(fields) };
}

/** The agent a trigger without agent_id uses: one the account's key may use (canUseAgent); audited when an actor is given. */
export async function setDefaultAgent(
  prisma: PrismaClient,
  accountId: string,
  agentId: string,
  actor?: Actor,
  now = new Date(),
) {
  const account = await findAccount(prisma, accountId);
  const agent = isUuid(agentId) ? await findAgentById(prisma, agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  if (!canUseAgent(account, agent))
    throw new AdminError(`Agent ${agentId} does not belong to account ${accountId} or its clients`);
  await prisma.$transaction(async (tx) => {
    await setDefaultAgentOf(tx, account.id, agent.id, now);
    if (actor)
      await audit(tx, account.id, actor, 'default_agent_changed', now, {
        agent_id: agent.id,
        agent_name: agent.name,
        previous_agent_id: account.defaultAgentId,
      });
  });
  return { account_id: account.id, default_agent_id: agent.id };
}

/** An edit of an agent: every field as the form gives it (no phone: the agent keeps none). */
export interface AgentEdit {
  name: string;
  phone?: string | undefined;
  timezone: string;
  windows: string[];
  outsideWindow: string;
  now?: Date | undefined;
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

/**
 * Changes an agent's name, phone number, time zone, calling windows and outside-window policy (never its account:
 * its calls and the defaults that name it stay as they are), audited as agent_changed with the fields that changed.
 * Its past calls keep their agent and caller ID. Calls waiting for the old calling window are handed back to the
 * dispatcher, which dials them now or waits for the new window. Nothing changed: nothing is written.
 */
export async function updateAgent(prisma: PrismaClient, agentId: string, input: AgentEdit, actor?: Actor) {
  const agent = isUuid(agentId) ? await findAgentById(prisma, agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  const fields = agentFields(input);
  const before: Record<string, unknown> = {
    name: agent.name,
    phone_number: agent.phoneNumber,
    timezone: agent.timezone,
    calling_windows: storedWindows(agent.callingWindows),
    outside_window_policy: agent.outsideWindowPolicy,
  };
  const after = auditedFields(fields);
  const changes = Object.fromEntries(
    Object.entries(after).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key])),
  );
  const changed = Object.keys(changes);
  if (changed.length === 0) return { id: agent.id, changed, windows: windowsOf(fields) };
  const now = input.now ?? new Date();
  await prisma.$transaction(async (tx) => {
    await updateAgentRow(tx, agent.id, fields, now);
    if (changes.calling_windows !== undefined || changes.timezone !== undefined)
      await rescheduleWaitingCalls(tx, agent.id, now);
    if (actor) await audit(tx, agent.accountId, actor, 'agent_changed', now, { agent_id: agent.id, ...changes });
  });
  return { id: agent.id, changed, windows: windowsOf(fields) };
}
