// Calling rules, for the viewer's own account (/dashboard/calling-rules) and, for agency users, each client's
// (/dashboard/clients/:id/calling-rules): one set of routes, registered twice. An agency's users change its settings on
// its own page; a client's page (and a client's users) show them in words. Own hours are added and removed on either:
// the agency's on its page, a client's narrower ones on the client's. Every change goes through src/admin, as
// callctl's do, which checks each field in words and audits it; a refusal shows the form again with the problem next
// to its field (plugins/dashboard/errors.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  CallingRulesProblem,
  putCallingHours,
  removeCallingHours,
  setCallingRules,
} from '../../admin/calling-rules.js';
import {
  CallingHoursForm,
  CallingRulesSettingsForm,
  RemoveCallingHoursForm,
} from '../../../schemas/dashboard/calling-rules.js';
import type { FormFailure } from '../../views/form-problem.js';
import {
  CLIENT_RULES,
  OWN_RULES,
  rulesPage,
  type RulesPageInput,
  type RulesPlace,
  type SettingsSent,
} from '../../views/pages/calling-rules.js';

const many = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The settings form as sent, to show again. */
function settingsSent(body: Partial<CallingRulesSettingsForm> | undefined): SettingsSent {
  return {
    enabled: body?.enabled === 'on',
    ruleSets: many(body?.rule_sets),
    kinds: many(body?.call_kinds),
    cap24h: (body?.cap_24h ?? '').slice(0, 40),
    cap7d: (body?.cap_7d ?? '').slice(0, 40),
    capScope: body?.cap_scope === 'account' ? 'account' : 'agency',
    consentRequired: body?.consent_required === 'on',
  };
}

/** A refusal's words: next to its field (src/admin names it), else above the form. */
function problemsOf(failure: FormFailure) {
  if (failure.error instanceof CallingRulesProblem) return { problem: null, fields: failure.error.fields };
  return { problem: failure.message, fields: {} };
}

function routesOf(place: RulesPlace): FastifyPluginAsyncTypebox {
  return async function callingRules(fastify) {
    // The page's account: the viewer's own, or the client named by `:id` (else 404).
    fastify.resolveManaged(place.managed, place.param);
    const accountOf = (request: FastifyRequest) => request.managed(place.managed);
    const render = async (request: FastifyRequest, reply: FastifyReply, status: number, input: RulesPageInput) =>
      reply.code(status).page('calling-rules', await rulesPage(request, accountOf(request), place, input));

    fastify.get(place.prefix, { config: { role: 'viewer' }, schema: { hide: true } }, async (request, reply) =>
      render(request, reply, 200, {}),
    );

    // The agency's settings: only on the agency's own page (a client's page shows them; a client user has no form).
    if (place.managed === 'own')
      fastify.post(
        `${place.prefix}/settings`,
        {
          schema: { hide: true, body: CallingRulesSettingsForm },
          attachValidation: true,
          config: {
            role: 'admin',
            formFailure: (request, reply, failure) => {
              if (accountOf(request).kind !== 'agency') throw fastify.httpErrors.notFound();
              const sent = settingsSent(request.body as Partial<CallingRulesSettingsForm> | undefined);
              return render(request, reply, 400, { settings: { sent, ...problemsOf(failure) } });
            },
          },
        },
        async (request, reply) => {
          const account = accountOf(request);
          // A client's users see the agency's settings; they have no such form (as for another tenant's page).
          if (account.kind !== 'agency') throw fastify.httpErrors.notFound();
          const body = request.body;
          const { changed, settings } = await request.admin.run(setCallingRules, {
            accountId: account.id,
            settings: {
              enabled: body.enabled === 'on',
              ruleSets: many(body.rule_sets),
              callKinds: many(body.call_kinds),
              cap24h: body.cap_24h ?? '',
              cap7d: body.cap_7d ?? '',
              capScope: body.cap_scope ?? 'agency',
              consentRequired: body.consent_required === 'on',
            },
            actor: request.admin.actor,
            now: request.admin.now(),
          });
          const text = !changed
            ? 'Nothing changed.'
            : settings.enabled
              ? 'Saved. Calling rules are on: every call is checked before each attempt.'
              : 'Saved. Calling rules are off: calls are dialled as before.';
          return reply.seeOther(place.base(account.id), { kind: 'ok', text });
        },
      );

    fastify.post(
      `${place.prefix}/hours`,
      {
        schema: { hide: true, body: CallingHoursForm },
        attachValidation: true,
        config: {
          role: 'admin',
          formFailure: (request, reply, failure) => {
            const body = request.body as Partial<CallingHoursForm> | undefined;
            const hours = {
              name: (body?.name ?? '').slice(0, 200),
              days: many(body?.days),
              from: (body?.from ?? '').slice(0, 40),
              to: (body?.to ?? '').slice(0, 40),
              ...problemsOf(failure),
            };
            return render(request, reply, 400, { hours });
          },
        },
      },
      async (request, reply) => {
        const account = accountOf(request);
        const { rule } = await request.admin.run(putCallingHours, {
          accountId: account.id,
          hours: {
            name: request.body.name,
            days: many(request.body.days),
            from: request.body.from,
            to: request.body.to,
          },
          actor: request.admin.actor,
          now: request.admin.now(),
        });
        const text = `Added "${rule.name}": calls only ${rule.hours} in the callee's local time.`;
        return reply.seeOther(place.base(account.id), { kind: 'ok', text });
      },
    );

    fastify.post(
      `${place.prefix}/hours/remove`,
      {
        schema: { hide: true, body: RemoveCallingHoursForm },
        attachValidation: true,
        config: {
          role: 'admin',
          formFailure: (request, reply, failure) =>
            render(request, reply, 400, {
              hours: { name: '', days: [], from: '', to: '', problem: failure.message, fields: {} },
            }),
        },
      },
      async (request, reply) => {
        const account = accountOf(request);
        const { removed, name } = await request.admin.run(removeCallingHours, {
          accountId: account.id,
          name: request.body.name,
          actor: request.admin.actor,
          now: request.admin.now(),
        });
        const text = removed ? `Removed "${name}".` : `There was no rule named "${name}": nothing changed.`;
        return reply.seeOther(place.base(account.id), { kind: 'ok', text });
      },
    );
  };
}

/** The viewer's own account's rules: in the signed-in family. */
export const ownCallingRules = routesOf(OWN_RULES);
/** A client's rules: in the agency-only family. */
export const clientCallingRules = routesOf(CLIENT_RULES);
