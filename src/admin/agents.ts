// Agents (created, edited, archived and restored, never deleted: calls point at them) and the default agent of an
// account, for callctl and the dashboard alike; each reaches only the agents and accounts its actor does (reach.ts).
// What an agent's fields may be is agent-input.ts's.
import { PROVIDER_NAMES } from '../../schemas/carrier.js';
import type { Storage } from '../storage/index.js';
import { agentFields, auditedFields, storedWindows, updatedAgentFields } from './agent-input.js';
import type { AgentInput, CreateAgentInput } from './agent-input.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';
import { carrierInUse } from './carriers.js';
import { findAccount, findAgent } from './reach.js';

// What callctl and the dashboard's form check an agent's input with, where they have always found it.
export {
  AGENT_NAME_MAX_LENGTH,
  agentInputProblem,
  newAgentProblem,
  type AgentInput,
  type CreateAgentInput,
} from './agent-input.js';

/** A caller ID that is not one of the numbers the account's carrier lists: the dashboard shows it beside the field. */
export class CallerIdNotOnCarrier extends AdminError {
  readonly field = 'phone';
}

/** How many of the carrier's numbers the refusal names. */
const NUMBERS_NAMED = 5;

/**
 * Refuses `phone` as the caller ID of an agent of `accountId` when the account's own carrier (or its agency's) lists
 * its numbers and `phone` is not one of them. The environment's carrier, and one that does not list numbers, are not
 * checked (PRODUCT.md, "Placing calls").
 */
async function checkCallerId(storage: Storage, accountId: string, phone: string | null): Promise<void> {
  if (phone === null) return;
  const carrier = await carrierInUse(storage, accountId);
  if (!carrier || carrier.numbers === null || carrier.numbers.includes(phone)) return;
  const name = PROVIDER_NAMES[carrier.provider];
  const some = carrier.numbers.slice(0, NUMBERS_NAMED).join(', ');
  const more = carrier.numbers.length > NUMBERS_NAMED ? `, ... (${carrier.numbers.length} in all)` : '';
  throw new CallerIdNotOnCarrier(
    carrier.numbers.length === 0
      ? `${phone} is not a number of this account's ${name} account, which lists none: buy or port one there first`
      : `${phone} is not a number of this account's ${name} account: use one of ${some}${more}`,
  );
}

/**
 * A new agent of the account (one the actor reaches), audited as agent_created when an actor is given (callctl and the
 * dashboard give one).
 */
export async function createAgent(storage: Storage, input: CreateAgentInput & { now: Date }, actor?: Actor) {
  const account = await findAccount(storage, input.accountId, actor);
  const fields = agentFields(input);
  await checkCallerId(storage, account.id, fields.phoneNumber);
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
 * account's id and the agent as checked (the caller needs no second, unscoped read of it). An account or an agent
 * the actor does not reach is one that does not exist.
 */
export async function setDefaultAgent(
  storage: Storage,
  accountId: string,
  agentId: string,
  actor: Actor | undefined,
  now: Date,
) {
  const account = await findAccount(storage, accountId, actor);
  const agent = await findAgent(storage, agentId, actor);
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
export async function updateAgent(storage: Storage, agentId: string, input: AgentInput & { now: Date }, actor: Actor) {
  const agent = await findAgent(storage, agentId, actor);
  const { fields, changes } = updatedAgentFields(agent, input);
  const changed = Object.keys(changes);
  const result = { id: agent.id, changed, agent: auditedFields(fields) };
  if (changed.length === 0) return result;
  // Only a new caller ID: one the carrier stopped listing since does not block a change of other fields.
  if (changes.phone_number !== undefined) await checkCallerId(storage, agent.accountId, fields.phoneNumber);
  const now = input.now;
  await storage.transaction(async (tx) => {
    await tx.agents.updateAgentRow(agent.id, fields, now);
    if (changes.calling_windows !== undefined || changes.timezone !== undefined)
      await tx.agents.rescheduleWaitingCalls(agent.id, now);
    await audit(tx, agent.accountId, actor, 'agent_changed', now, { agent_id: agent.id, ...changes });
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
  const agent = await findAgent(storage, agentId, actor);
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
