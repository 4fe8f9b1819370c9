// Agents: the agents a person manages (an agency user: the agency's and its clients'; a client user: their client's),
// created and edited through src/admin/agents.ts with callctl's rules and messages, and "Set as default". Calling
// windows are rows of days + from/to; each filled row becomes callctl's "<days> <HH:MM>-<HH:MM>". Another tenant's
// agent, or an account that is not the viewer's to manage, is a 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createAgent, setDefaultAgent, updateAgent } from '../../admin/agents.js';
import { AdminError } from '../../admin/errors.js';
import type { Actor } from '../../admin/audit.js';
import { callingWindowsSchemaCheck, CallingWindowError, formatCallingWindow } from '../../domain/calling-window.js';
import { isUuid } from '../../domain/ids.js';
import { managedAccount, managedAccountIds, requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { AgentForm, AgentParams } from '../../../schemas/dashboard/agents.js';
import { CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import { findListedAgent, listAgentsOfAccounts, type ListedAgent } from '../../storage/agents.js';
import { agencyAndClients } from '../../storage/overview.js';
import { NO_PHONE_DEFAULT } from './settings-words.js';
import { clientIp, formProblem } from './form-problem.js';

const LIST_PATH = '/dashboard/agents';
/** Empty window rows under the filled ones: room to add windows without a script (save, and more appear). */
const EMPTY_ROWS = 3;
const DAY_CHOICES = ['mon-fri', 'sat,sun', 'daily', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

interface WindowRow {
  days: string;
  from: string;
  to: string;
}
interface FormValues {
  name: string;
  phone: string;
  timezone: string;
  policy: string;
  account: string;
  rows: WindowRow[];
}

/** UTC and the IANA zones this runtime knows. */
const ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

/** The zones to choose from, with `current` first when the list lacks it (an alias such as US/Eastern). */
function timeZoneChoices(current: string): string[] {
  return ZONES.includes(current) ? ZONES : [current, ...ZONES];
}

const list = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The window rows as sent, in page order. */
function rowsOfForm(body: AgentForm): WindowRow[] {
  const days = list(body.window_days);
  const from = list(body.window_from);
  const to = list(body.window_to);
  return Array.from({ length: Math.max(days.length, from.length, to.length) }, (_, i) => ({
    days: (days[i] ?? '').trim(),
    from: (from[i] ?? '').trim(),
    to: (to[i] ?? '').trim(),
  }));
}

/** callctl's --window texts of the rows that say anything (a row without times is an unused row). */
function windowTexts(rows: WindowRow[]): string[] {
  return rows.filter((r) => r.from || r.to).map((r) => `${r.days} ${r.from}-${r.to}`);
}

/** The stored windows as rows (days in callctl's words, which the select offers even when not a usual choice). */
function rowsOfAgent(stored: unknown): WindowRow[] {
  try {
    return callingWindowsSchemaCheck(stored).map((w) => {
      const [days = '', times = ''] = formatCallingWindow(w).split(' ');
      const [from = '', to = ''] = times.split('-');
      return { days, from, to };
    });
  } catch (error) {
    if (error instanceof CallingWindowError) return [];
    throw error;
  }
}

const emptyRows = (): WindowRow[] => Array.from({ length: EMPTY_ROWS }, () => ({ days: 'mon-fri', from: '', to: '' }));

/** The edit form of a stored agent, with room for more windows. */
function valuesOfAgent(agent: {
  name: string;
  phoneNumber: string | null;
  timezone: string;
  outsideWindowPolicy: string;
  accountId: string;
  callingWindows: unknown;
}): FormValues {
  return {
    name: agent.name,
    phone: agent.phoneNumber ?? '',
    timezone: agent.timezone,
    policy: agent.outsideWindowPolicy,
    account: agent.accountId,
    rows: [...rowsOfAgent(agent.callingWindows), ...emptyRows()],
  };
}

/** What the form asks of createAgent or updateAgent, in callctl's terms. */
function agentEdit(body: AgentForm, rows: WindowRow[], now: Date) {
  return {
    name: body.name,
    phone: body.phone.trim() || undefined,
    timezone: body.timezone.trim(),
    windows: windowTexts(rows),
    outsideWindow: body.policy,
    now,
  };
}

/** "mon-fri 09:00-17:00", and "(into the next day)" when it ends after midnight. */
function windowWords(stored: unknown): string[] {
  try {
    const windows = callingWindowsSchemaCheck(stored);
    if (windows.length === 0) return ['Always open (no window)'];
    return windows.map((w) => `${formatCallingWindow(w)}${w.end <= w.start ? ' (into the next day)' : ''}`);
  } catch (error) {
    if (error instanceof CallingWindowError) return ['Unreadable (edit to set again)'];
    throw error;
  }
}

const POLICY_WORDS = { queue: 'Queue until the window opens', reject: 'Reject the trigger' } as const;

function actorOf(request: FastifyRequest): Actor {
  return { kind: 'user', userId: viewerOf(request).id, ip: clientIp(request) };
}

/** The agent `id` when the viewer manages its account, else a 404. */
async function managedAgent(request: FastifyRequest, reply: FastifyReply, id: string): Promise<ListedAgent> {
  const agent = isUuid(id) ? await findListedAgent(request.server.prisma, id) : null;
  if (!agent) throw reply.server.httpErrors.notFound();
  await managedAccount(request, reply, agent.accountId);
  return agent;
}

export default async function agents(fastify: FastifyInstance) {
  /** The accounts a new agent may belong to: for an agency user, the agency and its clients. */
  const accountChoices = async (request: FastifyRequest) => {
    const viewer = viewerOf(request);
    return viewer.accountKind === 'agency' ? agencyAndClients(fastify.prisma, viewer.accountId) : [];
  };

  const renderForm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    page: { agent: ListedAgent | null; values: FormValues; problem: string | null },
  ) => {
    const { agent, values, problem } = page;
    // The accounts (among the viewer's) whose trigger without agent_id uses this agent: without a phone number, each gets 400.
    // A client user sees only their own account (an agency user manages every account an agent can be the default of).
    const viewer = viewerOf(request);
    const defaultOf = (agent?.defaultFor ?? [])
      .filter((a) => viewer.accountKind === 'agency' || a.id === viewer.accountId)
      .map((a) => a.name);
    const days = (row: WindowRow) =>
      (DAY_CHOICES as readonly string[]).includes(row.days) || !row.days
        ? [...DAY_CHOICES]
        : [row.days, ...DAY_CHOICES];
    return reply.code(problem ? 400 : 200).page('agent-form', {
      title: agent ? `Agent: ${agent.name}` : 'New agent',
      action: agent ? `${LIST_PATH}/${agent.id}` : LIST_PATH,
      agent: agent && {
        id: agent.id,
        accountName: agent.account.name,
        isDefault: agent.defaultFor.some((a) => a.id === agent.accountId),
        defaultWithoutPhone: agent.phoneNumber === null && defaultOf.length > 0,
        defaultOf: defaultOf.join(', '),
      },
      values: { ...values, rows: values.rows.map((row) => ({ ...row, choices: days(row) })) },
      zones: timeZoneChoices(values.timezone),
      accounts: agent ? [] : await accountChoices(request),
      problem,
    });
  };

  fastify.get('/agents', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const viewer = viewerOf(request);
    const accountIds = await managedAccountIds(request);
    const agents = await listAgentsOfAccounts(fastify.prisma, accountIds);
    return reply.page('agents', {
      title: 'Agents',
      showAccount: viewer.accountKind === 'agency',
      agents: agents.map((agent) => {
        const defaultFor = agent.defaultFor.filter((a) => accountIds.includes(a.id));
        return {
          id: agent.id,
          name: agent.name,
          accountName: agent.account.name,
          accountKind: agent.account.kind,
          phone: agent.phoneNumber,
          timezone: agent.timezone,
          windows: windowWords(agent.callingWindows),
          policy: POLICY_WORDS[agent.outsideWindowPolicy],
          isDefault: defaultFor.some((a) => a.id === agent.accountId),
          defaultOfOthers: defaultFor.filter((a) => a.id !== agent.accountId).map((a) => a.name),
        };
      }),
    });
  });

  fastify.get('/agents/new', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const viewer = viewerOf(request);
    const values: FormValues = {
      name: '',
      phone: '',
      timezone: 'UTC',
      policy: 'queue',
      account: viewer.accountId,
      rows: emptyRows(),
    };
    return renderForm(request, reply, { agent: null, values, problem: null });
  });

  fastify.post<{ Body: AgentForm }>(
    '/agents',
    { schema: { hide: true, body: AgentForm }, attachValidation: true, preHandler: requireUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const problem = formProblem(request);
      if (problem) {
        const values: FormValues = {
          name: '',
          phone: '',
          timezone: 'UTC',
          policy: 'queue',
          account: viewer.accountId,
          rows: emptyRows(),
        };
        return renderForm(request, reply, { agent: null, values, problem });
      }
      const body = request.body;
      const account = await managedAccount(request, reply, body.account || viewer.accountId);
      const rows = rowsOfForm(body);
      const values: FormValues = {
        name: body.name,
        phone: body.phone,
        timezone: body.timezone,
        policy: body.policy,
        account: account.id,
        rows,
      };
      try {
        await createAgent(
          fastify.prisma,
          { accountId: account.id, ...agentEdit(body, rows, fastify.now()) },
          actorOf(request),
        );
        return reply.seeOther(LIST_PATH, { kind: 'ok', text: `Agent ${body.name.trim()} created.` });
      } catch (error) {
        if (error instanceof AdminError)
          return renderForm(request, reply, { agent: null, values, problem: error.message });
        throw error;
      }
    },
  );

  fastify.get<{ Params: AgentParams }>(
    '/agents/:id',
    { schema: { hide: true, params: AgentParams }, preHandler: requireUser },
    async (request, reply) => {
      const agent = await managedAgent(request, reply, request.params.id);
      return renderForm(request, reply, { agent, values: valuesOfAgent(agent), problem: null });
    },
  );

  fastify.post<{ Params: AgentParams; Body: AgentForm }>(
    '/agents/:id',
    { schema: { hide: true, params: AgentParams, body: AgentForm }, attachValidation: true, preHandler: requireUser },
    async (request, reply) => {
      const agent = await managedAgent(request, reply, request.params.id);
      const problem = formProblem(request);
      const body = request.body;
      if (problem) return renderForm(request, reply, { agent, values: valuesOfAgent(agent), problem });
      const rows = rowsOfForm(body);
      const values: FormValues = {
        name: body.name,
        phone: body.phone,
        timezone: body.timezone,
        policy: body.policy,
        account: agent.accountId,
        rows,
      };
      try {
        const result = await updateAgent(
          fastify.prisma,
          agent.id,
          agentEdit(body, rows, fastify.now()),
          actorOf(request),
        );
        const text = result.changed.length === 0 ? 'Nothing changed.' : `Agent ${body.name.trim()} saved.`;
        return reply.seeOther(LIST_PATH, { kind: 'ok', text });
      } catch (error) {
        if (error instanceof AdminError) return renderForm(request, reply, { agent, values, problem: error.message });
        throw error;
      }
    },
  );

  fastify.post<{ Params: AgentParams; Body: CsrfOnlyForm }>(
    '/agents/:id/default',
    { schema: { hide: true, params: AgentParams, body: CsrfOnlyForm }, preHandler: requireUser },
    async (request, reply) => {
      const agent = await managedAgent(request, reply, request.params.id);
      await setDefaultAgent(fastify.prisma, agent.accountId, agent.id, actorOf(request), fastify.now());
      if (agent.phoneNumber === null)
        return reply.seeOther(LIST_PATH, { kind: 'error', text: NO_PHONE_DEFAULT(agent.name) });
      return reply.seeOther(LIST_PATH, {
        kind: 'ok',
        text: `${agent.name} is now the default agent of ${agent.account.name}.`,
      });
    },
  );
}
