// Agents and the default agent of an account.
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../domain/ids.js';
import { isValidE164 } from '../domain/phone-number.js';
import { CallingWindowError, formatCallingWindow, isValidTimeZone, parseCallingWindow } from '../domain/calling-window.js';
import { canUseAgent } from '../domain/tenancy.js';
import { findAccount } from './accounts.js';
import { AdminError } from './errors.js';

export interface CreateAgentInput {
  accountId: string;
  name: string;
  phone?: string | undefined;
  timezone?: string | undefined;
  windows?: string[] | undefined;
  outsideWindow?: string | undefined;
}

export async function createAgent(prisma: PrismaClient, input: CreateAgentInput) {
  const account = await findAccount(prisma, input.accountId);
  if (!input.name.trim()) throw new AdminError('An agent needs a name');
  if (input.phone !== undefined && !isValidE164(input.phone)) throw new AdminError(`Invalid phone number "${input.phone}": use E.164, e.g. +14155552671`);
  const timezone = input.timezone ?? 'UTC';
  if (!isValidTimeZone(timezone)) throw new AdminError(`Unknown time zone "${timezone}": use an IANA name such as America/New_York`);
  const policy = input.outsideWindow ?? 'queue';
  if (policy !== 'queue' && policy !== 'reject') throw new AdminError(`--outside-window must be queue or reject, not "${policy}"`);
  let windows;
  try {
    windows = (input.windows ?? []).map(parseCallingWindow);
  } catch (error) {
    if (error instanceof CallingWindowError) throw new AdminError(error.message);
    throw error;
  }
  const agent = await prisma.agent.create({
    data: {
      accountId: account.id,
      agencyId: account.kind === 'agency' ? account.id : account.agencyId!,
      name: input.name.trim(),
      phoneNumber: input.phone ?? null,
      timezone,
      callingWindows: windows as object[],
      outsideWindowPolicy: policy,
    },
  });
  return { id: agent.id, windows: windows.map(formatCallingWindow) };
}

export async function setDefaultAgent(prisma: PrismaClient, accountId: string, agentId: string) {
  const account = await findAccount(prisma, accountId);
  const agent = isUuid(agentId) ? await prisma.agent.findUnique({ where: { id: agentId } }) : null;
  if (!agent) throw new AdminError(`No agent ${agentId}`);
  if (!canUseAgent(account, agent)) throw new AdminError(`Agent ${agentId} does not belong to account ${accountId} or its clients`);
  await prisma.account.update({ where: { id: account.id }, data: { defaultAgentId: agent.id } });
  return { account_id: account.id, default_agent_id: agent.id };
}
