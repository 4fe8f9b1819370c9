// Agents and the default agent of an account.
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../domain/ids.js';
import { isValidE164 } from '../domain/phone-number.js';
import { CallingWindowError, formatCallingWindow, isValidTimeZone, parseCallingWindow } from '../domain/calling-window.js';
import { canUseAgent } from '../domain/tenancy.js';
import { findAgentById, insertAgent } from '../storage/accounts.js';
import { setDefaultAgentOf } from '../storage/keys.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './users.js';

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
  if (input.phone !== undefined && !isValidE164(input.phone)) return `Invalid phone number "${input.phone}": use E.164, e.g. +14155552671`;
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

export async function createAgent(prisma: PrismaClient, input: CreateAgentInput) {
  const account = await findAccount(prisma, input.accountId);
  if (!input.name.trim()) throw new AdminError('An agent needs a name');
  const problem = agentInputProblem(input);
  if (problem) throw new AdminError(problem);
  const timezone = input.timezone ?? 'UTC';
  const policy = input.outsideWindow === 'reject' ? 'reject' : 'queue';
  const windows = (input.windows ?? []).map(parseCallingWindow);
  const agent = await insertAgent(prisma, {
    accountId: account.id,
    agencyId: account.kind === 'agency' ? account.id : account.agencyId!,
    name: input.name.trim(),
    phoneNumber: input.phone ?? null,
    timezone,
    callingWindows: windows as object[],
    outsideWindowPolicy: policy,
  });
  return { id: agent.id, windows: windows.map(formatCallingWindow) };
}

/** The agent a trigger without agent_id uses: one the account's key may use (canUseAgent); audited when an actor is given. */
export async function setDefaultAgent(prisma: PrismaClient, accountId: string, agentId: string, actor?: Actor, now = new Date()) {
  const account = await findAccount(prisma, accountId);
  const agent = isUuid(agentId) ? await findAgentById(prisma, agentId) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  if (!canUseAgent(account, agent)) throw new AdminError(`Agent ${agentId} does not belong to account ${accountId} or its clients`);
  await prisma.$transaction(async (tx) => {
    await setDefaultAgentOf(tx, account.id, agent.id, now);
    if (actor) await audit(tx, account.id, actor, 'default_agent_changed', now, { agent_id: agent.id, agent_name: agent.name, previous_agent_id: account.defaultAgentId });
  });
  return { account_id: account.id, default_agent_id: agent.id };
}
