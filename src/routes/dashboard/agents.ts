// Agents: the agents a person manages (an agency user: the agency's and its clients'; a client user: their client's),
// created and edited through src/admin/agents.ts with callctl's rules (calling windows, retry policy, voicemail, whose
// time the windows are read in), "Set as default", archive and restore; their list is agents-list.ts. Another
// tenant's agent, or an account that is not the viewer's to manage, is a 404. Every field's problem is shown next to
// it, all at once, in plain words (src/routes/dashboard/agent-form.ts); "Add a window" and "Remove" show the form
// again and save nothing.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import path from 'node:path';
import { inScope, isAgencyScope } from '../../domain/tenancy.js';
import { DEFAULT_COUNTRY } from '../../domain/typed-phone-number.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountCountry } from '../../admin/account-country.js';
import { createAgent, setAgentArchived, setDefaultAgent, updateAgent } from '../../admin/agents.js';
import { AdminError } from '../../admin/errors.js';
import { AgentForm, AgentParams } from '../../../schemas/dashboard/agents.js';
import { CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import type { ListedAgent } from '../../storage/index.js';
import {
  actionOf,
  agentInput,
  FORM_RULES,
  newAgentValues,
  rowsAfter,
  rowsOfForm,
  valuesOfAgent,
  valuesOfForm,
  type FieldErrors,
  type FormValues,
} from '../../views/pages/agent-form-values.js';
import { fieldProblems } from '../../views/pages/agent-form-problems.js';
import { phoneCountry, storedNumber, type PhoneCountry } from '../../views/pages/agent-caller-id.js';
import { reachSummary } from '../../views/format/agent.js';
import { formatTime } from '../../views/format/time.js';
import { NO_PHONE_DEFAULT } from '../../views/format/settings.js';
import { formProblem, refusals, type FormFailure, type Refusal } from '../../views/form-problem.js';
import { canonicalZone, isOfferedZone, UTC_ALIASES, ZONE_REGIONS } from '../../domain/time-zones.js';
import { dashboardBaseUrl } from '../../admin/users.js';
import { AGENTS_PATH as LIST_PATH } from './agents-list.js';

/** What the page says above a form with field problems. */
const FIELDS_PROBLEM = 'Some fields need a change: each says what is wrong next to it.';

/** The zones to choose from: UTC and the canonical names by region, and `current` when the list lacks it. */
function timeZoneChoices(current: string) {
  return { utcAliases: UTC_ALIASES, regions: ZONE_REGIONS, other: isOfferedZone(current) ? null : current };
}

/**
 * A trigger naming the agent, ready to paste (the key is a placeholder: a key is shown once, when generated). With a
 * self-signed certificate (TLS_MODE=self-signed, the default install) curl refuses the connection unless told: `-k`,
 * as the README's example says, since the certificate's names (localhost, the host's name) may not be the address
 * the page gives; the page names the certificate for --cacert beside it.
 */
function curlExample(baseUrl: string, agentId: string, selfSigned: boolean): string {
  return [
    `curl${selfSigned ? ' -k' : ''} -X POST '${baseUrl}/api/v1/calls/trigger' \\`,
    "  -H 'Authorization: Bearer <your key>' \\",
    "  -H 'Content-Type: application/json' \\",
    `  -d '{"phone_number": "+14155552671", "agent_id": "${agentId}"}'`,
  ].join('\n');
}

/** A refused change of an agent's state: back to its page, the refusal as the notice. */
function backToAgent(request: FastifyRequest, reply: FastifyReply, { message }: FormFailure) {
  return reply.seeOther(`${LIST_PATH}/${request.managed('agent').id}`, { kind: 'error', text: message });
}

const agents: FastifyPluginAsyncTypebox = async (fastify) => {
  // `/agents/:id`: an agent of an account the viewer manages, else 404.
  fastify.resolveManaged('agent', 'id');

  /** The accounts a new agent may belong to: for an agency user, the agency and its clients. */
  const accountChoices = async (request: FastifyRequest) =>
    isAgencyScope(request.scope) ? request.scoped.listAccountsInScope() : [];

  /** The listener's certificate is the one generated under DATA_DIR/tls (src/tls.ts), which no client trusts. */
  const selfSigned = fastify.config.TLS_MODE === 'self-signed';

  /** The service's address as integrators reach it: PUBLIC_BASE_URL, else the host this page was asked on. */
  const baseUrlOf = (request: FastifyRequest) =>
    dashboardBaseUrl({
      PUBLIC_BASE_URL: fastify.config.PUBLIC_BASE_URL ?? `https://${request.host}`,
      PORT: fastify.config.PORT,
    });

  /** The country a caller ID typed without its country code is read in: the account's (src/admin/account-country.ts). */
  const countryOf = async (request: FastifyRequest, account: { id: string; agencyId: string | null }) =>
    phoneCountry(await request.admin.run(accountCountry, account));

  /** The country of the account `accountId` (one of the viewer's: the viewer's own, a new agent's, an agent's). */
  const countryOfAccount = async (request: FastifyRequest, accountId: string): Promise<PhoneCountry> => {
    const account = await request.scoped.findAccountInScope(accountId);
    return account ? countryOf(request, account) : phoneCountry(DEFAULT_COUNTRY);
  };

  const renderForm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    page: {
      agent: ListedAgent | null;
      values: FormValues;
      problem?: string | null;
      errors?: FieldErrors;
      browserZone?: boolean;
      country: PhoneCountry;
    },
  ) => {
    const { agent, values } = page;
    const errors = page.errors ?? {};
    const problem = page.problem ?? (Object.keys(errors).length ? FIELDS_PROBLEM : null);
    // The accounts (among the viewer's) whose trigger without agent_id uses this agent: without a phone number, each gets 400.
    // A client user sees only their own account (an agency user manages every account an agent can be the default of).
    const defaultOf = (agent?.defaultFor ?? []).filter((a) => inScope(request.scope, a)).map((a) => a.name);
    return reply.code(problem ? 400 : 200).page('agent-form', {
      title: agent ? `Agent: ${agent.name}` : 'New agent',
      action: agent ? `${LIST_PATH}/${agent.id}` : LIST_PATH,
      agent: agent && {
        id: agent.id,
        accountName: agent.account.name,
        isDefault: agent.defaultFor.some((a) => a.id === agent.accountId),
        defaultWithoutPhone: agent.phoneNumber === null && defaultOf.length > 0,
        defaultOf: defaultOf.join(', '),
        // Its zone as the form shows it: by its canonical name.
        summary: reachSummary({ ...agent, timezone: canonicalZone(agent.timezone) }),
        archivedAt: agent.archivedAt && formatTime(agent.archivedAt),
        curl: curlExample(baseUrlOf(request), agent.id, selfSigned),
        certificate: selfSigned ? path.join(fastify.config.DATA_DIR, 'tls', 'cert.pem') : null,
      },
      values,
      phoneCountry: page.country.name,
      rules: FORM_RULES,
      zones: timeZoneChoices(values.timezone),
      browserZone: page.browserZone ?? false,
      accounts: agent ? [] : await accountChoices(request),
      problem,
      errors,
    });
  };

  fastify.get('/agents/new', { schema: { hide: true } }, async (request, reply) => {
    const values = newAgentValues(request.user.accountId);
    const country = await countryOfAccount(request, request.user.accountId);
    return renderForm(request, reply, { agent: null, values, browserZone: true, country });
  });

  fastify.post(
    '/agents',
    { schema: { hide: true, body: AgentForm }, attachValidation: true },
    async (request, reply) => {
      const viewer = request.user;
      const refused = refusals(request, AgentForm, request.body);
      if (!refused)
        return renderForm(request, reply, {
          agent: null,
          values: newAgentValues(viewer.accountId),
          problem: formProblem(request),
          country: await countryOfAccount(request, viewer.accountId),
        });
      const body = request.body;
      if (refused.some((r) => r.field === 'account')) throw fastify.httpErrors.notFound();
      const account = await request.scoped.findAccountInScope(body.account || viewer.accountId);
      if (!account) throw fastify.httpErrors.notFound();
      // A number without its country code is read in the country of the account the agent is for.
      const country = await countryOf(request, account);
      const action = actionOf(body);
      const rows = rowsOfForm(body);
      const values = valuesOfForm(body, rowsAfter(rows, action), account.id, newAgentValues(account.id), country);
      const page = { agent: null, values, country };
      if (action.kind !== 'save') return renderForm(request, reply, page);
      const errors = fieldProblems(body, rows, country);
      // A field the schema refused is one fieldProblems words; should one not be, the form as a whole is refused.
      if (Object.keys(errors).length || refused.length)
        return renderForm(request, reply, { ...page, errors, problem: problemOf(errors, refused) });
      try {
        const input = agentInput(body, rows, request.admin.now(), country);
        await request.admin.run(createAgent, { accountId: account.id, ...input }, request.admin.actor);
        const text = `Agent ${body.name.trim()} created.${storedNumber(body.phone, input.phone)}`;
        return reply.seeOther(LIST_PATH, { kind: 'ok', text });
      } catch (error) {
        if (error instanceof AdminError) return renderForm(request, reply, { ...page, problem: error.message });
        throw error;
      }
    },
  );

  fastify.get('/agents/:id', { schema: { hide: true, params: AgentParams } }, async (request, reply) => {
    const agent = request.managed('agent');
    const country = await countryOfAccount(request, agent.accountId);
    return renderForm(request, reply, { agent, values: valuesOfAgent(agent), country });
  });

  fastify.post(
    '/agents/:id',
    { schema: { hide: true, params: AgentParams, body: AgentForm }, attachValidation: true },
    async (request, reply) => {
      const agent = request.managed('agent');
      const country = await countryOfAccount(request, agent.accountId);
      const refused = refusals(request, AgentForm, request.body);
      if (!refused)
        return renderForm(request, reply, {
          agent,
          values: valuesOfAgent(agent),
          problem: formProblem(request),
          country,
        });
      const body = request.body;
      const action = actionOf(body);
      const rows = rowsOfForm(body);
      // An edit keeps the agent's account: the field, refused or not, is not read.
      const values = valuesOfForm(body, rowsAfter(rows, action), agent.accountId, valuesOfAgent(agent), country);
      const page = { agent, values, country };
      if (action.kind !== 'save') return renderForm(request, reply, page);
      const errors = fieldProblems(body, rows, country);
      const fields = refused.filter((r) => r.field !== 'account');
      if (Object.keys(errors).length || fields.length)
        return renderForm(request, reply, { ...page, errors, problem: problemOf(errors, fields) });
      try {
        const input = agentInput(body, rows, request.admin.now(), country);
        const result = await request.admin.run(updateAgent, agent.id, input, request.admin.actor);
        const text =
          result.changed.length === 0
            ? 'Nothing changed.'
            : `Agent ${body.name.trim()} saved.${storedNumber(body.phone, input.phone)}`;
        return reply.seeOther(LIST_PATH, { kind: 'ok', text });
      } catch (error) {
        if (error instanceof AdminError) return renderForm(request, reply, { ...page, problem: error.message });
        throw error;
      }
    },
  );

  fastify.post(
    '/agents/:id/default',
    { schema: { hide: true, params: AgentParams, body: CsrfOnlyForm }, config: { formFailure: backToAgent } },
    async (request, reply) => {
      const agent = request.managed('agent');
      await request.admin.run(setDefaultAgent, agent.accountId, agent.id, request.admin.actor, request.admin.now());
      if (agent.phoneNumber === null)
        return reply.seeOther(LIST_PATH, { kind: 'error', text: NO_PHONE_DEFAULT(agent.name) });
      return reply.seeOther(LIST_PATH, {
        kind: 'ok',
        text: `${agent.name} is now the default agent of ${agent.account.name}.`,
      });
    },
  );

  // Archive and restore: the agent's page asks with a button that says what archiving does.
  for (const archive of [true, false]) {
    fastify.post(
      `/agents/:id/${archive ? 'archive' : 'restore'}`,
      { schema: { hide: true, params: AgentParams, body: CsrfOnlyForm }, config: { formFailure: backToAgent } },
      async (request, reply) => {
        const agent = request.managed('agent');
        await request.admin.run(setAgentArchived, agent.id, archive, request.admin.actor, request.admin.now());
        const text = archive
          ? `Agent ${agent.name} archived: new triggers naming it get 400 "Agent not found". Its calls keep it; ` +
            'restore it from the Archived section.'
          : `Agent ${agent.name} restored: triggers may use it again.`;
        return reply.seeOther(LIST_PATH, { kind: 'ok', text });
      },
    );
  }
};

/** The problem above the form: the fields' (each shown next to it), or the form's when a refused field has no words. */
function problemOf(errors: FieldErrors, refused: Refusal[]): string {
  const worded = refused.every((r) => Object.keys(errors).some((id) => fieldOfError(id) === r.field));
  return worded && Object.keys(errors).length
    ? FIELDS_PROBLEM
    : 'The form was not filled in as expected. Reload the page and try again.';
}

/** The form field an error id is about: "w2-from" is window_from's, "w0-days" window_day's; others are themselves. */
function fieldOfError(id: string): string {
  const row = /^w\d+-(days|from|to)$/.exec(id);
  if (!row) return id;
  return row[1] === 'days' ? 'window_day' : `window_${row[1]}`;
}

export default agents;
