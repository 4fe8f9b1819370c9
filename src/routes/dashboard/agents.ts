// Agents: the agents a person manages (an agency user: the agency's and its clients'; a client user: their client's),
// created and edited through src/admin/agents.ts with callctl's rules (calling windows, retry policy, voicemail, whose
// time the windows are read in), "Set as default", archive and restore; their list is agents-list.ts. Another
// tenant's agent, or an account that is not the viewer's to manage, is a 404. Every field's problem is shown next to
// it, all at once, in plain words (src/views/pages/agent-form-problems.ts); "Add a window" and "Remove" show the form
// again and save nothing.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import path from 'node:path';
import { inScope, isAgencyScope } from '../../domain/tenancy.js';
import { DEFAULT_COUNTRY } from '../../domain/typed-phone-number.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountCountry } from '../../admin/account-country.js';
import {
  CallerIdNotOnCarrier,
  createAgent,
  setAgentArchived,
  setDefaultAgent,
  updateAgent,
} from '../../admin/agents.js';
import { AgentEditForm, AgentForm, AgentParams } from '../../../schemas/dashboard/agents.js';
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
import { NO_PHONE_DEFAULT } from '../../views/format/settings.js';
import { FormProblem, refusals, type FormFailure, type Refusal } from '../../views/form-problem.js';
import { canonicalZone, isOfferedZone, UTC_ALIASES, ZONE_REGIONS } from '../../domain/time-zones.js';
import { dashboardBaseUrl } from '../../admin/users.js';
import { FIELDS_PROBLEM, problemOf } from './agent-form-problem.js';
import { AGENTS_PATH as LIST_PATH } from './agents-list.js';

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

  /** Development: a hand-off address may be local (WEBHOOK_ALLOW_PRIVATE_TARGETS, as webhook URLs). */
  const allowPrivate = fastify.config.WEBHOOK_ALLOW_PRIVATE_TARGETS;

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
        archivedAt: agent.archivedAt && request.times.time(agent.archivedAt),
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

  /** A new agent's account: the one chosen (the viewer's own when none is), one of the viewer's, else 404. */
  const newAgentAccount = async (request: FastifyRequest, body: AgentForm, refused: Refusal[]) => {
    // An account id the schema refused is no account of the viewer's: a 404, like another tenant's.
    if (refused.some((r) => r.field === 'account')) throw fastify.httpErrors.notFound();
    const account = await request.scoped.findAccountInScope(body.account || request.user.accountId);
    if (!account) throw fastify.httpErrors.notFound();
    // A number without its country code is read in the country of the account the agent is for.
    return { accountId: account.id, country: await countryOf(request, account) };
  };

  /**
   * The form as sent: the account it is for (an edit keeps the agent's: the field, refused or not, is not read), the
   * values to show again, the button pressed and the window rows.
   */
  const sentForm = async (request: FastifyRequest, agent: ListedAgent | null, refused: Refusal[]) => {
    const body = request.body as AgentForm;
    const { accountId, country } = agent
      ? { accountId: agent.accountId, country: await countryOfAccount(request, agent.accountId) }
      : await newAgentAccount(request, body, refused);
    const action = actionOf(body);
    const rows = rowsOfForm(body);
    const defaults = agent ? valuesOfAgent(agent) : newAgentValues(accountId);
    const values = valuesOfForm(body, rowsAfter(rows, action), accountId, defaults, country);
    return { accountId, country, action, rows, page: { agent, values, country } };
  };

  /**
   * A refused form, again as sent: a field the schema refused is worded next to it (should one not be, the form as a
   * whole is refused), as are the fields the route refuses, and src/admin's refusal above the form. A form the page
   * never sends: the form as it was before it was filled in, with the form's problem.
   */
  const formAgain =
    (agentOf: (request: FastifyRequest) => ListedAgent | null) =>
    async (request: FastifyRequest, reply: FastifyReply, failure: FormFailure) => {
      const agent = agentOf(request);
      const refused = failure.invalid ? refusals(request, agent ? AgentEditForm : AgentForm, request.body) : [];
      if (!refused) {
        const country = await countryOfAccount(request, agent?.accountId ?? request.user.accountId);
        const values = agent ? valuesOfAgent(agent) : newAgentValues(request.user.accountId);
        return renderForm(request, reply, { agent, values, problem: failure.message, country });
      }
      const sent = await sentForm(request, agent, refused);
      if (!failure.invalid) {
        // A caller ID its account's carrier does not list: src/admin's words beside the caller-ID field.
        const onPhone = failure.error instanceof CallerIdNotOnCarrier;
        const [errors, problem] = onPhone
          ? [{ phone: failure.message }, FIELDS_PROBLEM]
          : [failure.fields, failure.message];
        return renderForm(request, reply, { ...sent.page, errors, problem });
      }
      // "Add a window" and "Remove" save nothing: the form again as sent, its fields unchecked.
      if (sent.action.kind !== 'save') return renderForm(request, reply, sent.page);
      const errors = fieldProblems(request.body as AgentForm, sent.rows, sent.country, allowPrivate);
      return renderForm(request, reply, { ...sent.page, errors, problem: problemOf(errors, refused) });
    };

  fastify.get('/agents/new', { config: { role: 'member' }, schema: { hide: true } }, async (request, reply) => {
    const values = newAgentValues(request.user.accountId);
    const country = await countryOfAccount(request, request.user.accountId);
    return renderForm(request, reply, { agent: null, values, browserZone: true, country });
  });

  fastify.post(
    '/agents',
    {
      schema: { hide: true, body: AgentForm },
      attachValidation: true,
      config: { role: 'member', formFailure: formAgain(() => null) },
    },
    async (request, reply) => {
      const { body } = request;
      const sent = await sentForm(request, null, []);
      if (sent.action.kind !== 'save') return renderForm(request, reply, sent.page);
      const errors = fieldProblems(body, sent.rows, sent.country, allowPrivate);
      if (Object.keys(errors).length) throw new FormProblem(FIELDS_PROBLEM, 400, errors);
      const input = agentInput(body, sent.rows, request.admin.now(), sent.country, allowPrivate);
      await request.admin.run(createAgent, { accountId: sent.accountId, ...input }, request.admin.actor);
      const text = `Agent ${body.name.trim()} created.${storedNumber(body.phone, input.phone)}`;
      return reply.seeOther(LIST_PATH, { kind: 'ok', text });
    },
  );

  fastify.get(
    '/agents/:id',
    { config: { role: 'viewer' }, schema: { hide: true, params: AgentParams } },
    async (request, reply) => {
      const agent = request.managed('agent');
      const country = await countryOfAccount(request, agent.accountId);
      return renderForm(request, reply, { agent, values: valuesOfAgent(agent), country });
    },
  );

  fastify.post(
    '/agents/:id',
    {
      schema: { hide: true, params: AgentParams, body: AgentEditForm },
      attachValidation: true,
      config: { role: 'member', formFailure: formAgain((request) => request.managed('agent')) },
    },
    async (request, reply) => {
      const { body } = request;
      const agent = request.managed('agent');
      const sent = await sentForm(request, agent, []);
      if (sent.action.kind !== 'save') return renderForm(request, reply, sent.page);
      const errors = fieldProblems(body, sent.rows, sent.country, allowPrivate);
      if (Object.keys(errors).length) throw new FormProblem(FIELDS_PROBLEM, 400, errors);
      const input = agentInput(body, sent.rows, request.admin.now(), sent.country, allowPrivate);
      const result = await request.admin.run(updateAgent, agent.id, input, request.admin.actor);
      const text =
        result.changed.length === 0
          ? 'Nothing changed.'
          : `Agent ${body.name.trim()} saved.${storedNumber(body.phone, input.phone)}`;
      return reply.seeOther(LIST_PATH, { kind: 'ok', text });
    },
  );

  fastify.post(
    '/agents/:id/default',
    {
      schema: { hide: true, params: AgentParams, body: CsrfOnlyForm },
      config: { role: 'admin', formFailure: backToAgent },
    },
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
      {
        schema: { hide: true, params: AgentParams, body: CsrfOnlyForm },
        config: { role: 'member', formFailure: backToAgent },
      },
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

export default agents;
