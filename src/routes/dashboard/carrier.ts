// Settings → Carrier, for the viewer's own account (/dashboard/settings/carrier) and, for agency users, each client's
// (/dashboard/clients/:id/carrier): one set of routes, registered twice. It shows the carrier the account's calls go
// through; admins and owners set it (the credentials checked at the carrier, stored sealed, never shown or sent back)
// and remove it; an agency's admins switch whether its clients choose their own. Every change goes through
// src/admin/carriers.ts, as callctl's do; a refusal shows the provider's form again with the problem next to its
// field (plugins/dashboard/errors.ts), its secret fields empty.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CarrierProblem, removeCarrier, setCarrier, setClientsChooseCarrier } from '../../admin/carriers.js';
import { CarrierForm, ClientsChooseForm } from '../../../schemas/dashboard/carrier.js';
import { CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import { CARRIER_CREDENTIALS, CARRIER_PROVIDERS, PROVIDER_NAMES, secretFields } from '../../../schemas/carrier.js';
import { carrierApiAddresses, carrierSetRefusal, environmentCarrier } from '../../config-carriers.js';
import { checkCarrierAccount } from '../../dispatch/carrier-accounts.js';
import { FormProblem, type FormFailure } from '../../views/form-problem.js';
import {
  carrierPage,
  CLIENT_CARRIER,
  OWN_CARRIER,
  type CarrierPageInput,
  type CarrierPlace,
} from '../../views/pages/carrier.js';

const isProvider = (value: string): value is (typeof CARRIER_PROVIDERS)[number] =>
  (CARRIER_PROVIDERS as readonly string[]).includes(value);

/** The provider's form as sent, to show again: its own fields only, never a secret. */
function sentForm(body: Partial<CarrierForm> | undefined, failure: FormFailure): CarrierPageInput['form'] {
  const provider = body?.provider && isProvider(body.provider) ? body.provider : CARRIER_PROVIDERS[0];
  const secret = new Set(secretFields(provider));
  const values: Record<string, string> = {};
  for (const name of Object.keys(CARRIER_CREDENTIALS[provider].properties)) {
    const value = (body as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'string' && !secret.has(name)) values[name] = value;
  }
  const field = failure.error instanceof CarrierProblem ? failure.error.field : null;
  // Beside its field when it is one of this form's; above the form otherwise (the carrier's refusal).
  if (field !== null && field in CARRIER_CREDENTIALS[provider].properties)
    return { provider, values, problem: null, fields: { [field]: failure.message } };
  return { provider, values, problem: failure.message, fields: {} };
}

function routesOf(place: CarrierPlace): FastifyPluginAsyncTypebox {
  return async function carrier(fastify) {
    // The page's account: the viewer's own, or the client named by `:id` (else 404).
    fastify.resolveManaged(place.managed, place.param);
    const accountOf = (request: FastifyRequest) => request.managed(place.managed);
    const settings = () => ({
      environment: environmentCarrier(fastify.config),
      refusal: carrierSetRefusal(fastify.config),
    });
    const render = async (request: FastifyRequest, reply: FastifyReply, status: number, input: CarrierPageInput) =>
      reply.code(status).page('carrier', await carrierPage(request, accountOf(request), place, settings(), input));

    fastify.get(place.prefix, { config: { role: 'viewer' }, schema: { hide: true } }, async (request, reply) =>
      render(request, reply, 200, {}),
    );

    fastify.post(
      place.prefix,
      {
        schema: { hide: true, body: CarrierForm },
        attachValidation: true,
        config: {
          role: 'admin',
          formFailure: (request, reply, failure) =>
            render(request, reply, failure.status, {
              form: sentForm(request.body as Partial<CarrierForm> | undefined, failure),
            }),
        },
      },
      async (request, reply) => {
        const refusal = carrierSetRefusal(fastify.config);
        if (refusal) throw new FormProblem(refusal);
        const account = accountOf(request);
        const credentials: Record<string, unknown> = { ...request.body };
        delete credentials._csrf;
        delete credentials.provider;
        const { provider } = request.body;
        const addresses = carrierApiAddresses(fastify.config);
        const view = await request.admin.run(
          setCarrier,
          account.id,
          { provider, credentials },
          request.admin.actor,
          (carrier) => checkCarrierAccount(carrier, addresses),
          request.admin.now(),
        );
        const name = PROVIDER_NAMES[view.provider];
        const numbers =
          view.numbers === null
            ? 'It does not list numbers: agents’ caller IDs are not checked against it.'
            : `It lists ${view.numbers.length === 1 ? '1 number' : `${view.numbers.length} numbers`}.`;
        const text =
          view.source === 'account'
            ? `Saved: ${name} accepted these credentials and places this account's calls from now on. ${numbers}`
            : `Saved: ${name} accepted these credentials; they are used once the agency lets its clients choose their carrier.`;
        return reply.seeOther(place.base(account.id), { kind: 'ok', text });
      },
    );

    fastify.post(
      `${place.prefix}/remove`,
      {
        schema: { hide: true, body: CsrfOnlyForm },
        attachValidation: true,
        config: {
          role: 'admin',
          formFailure: (request, reply, failure) =>
            render(request, reply, failure.status, { problem: failure.message }),
        },
      },
      async (request, reply) => {
        const account = accountOf(request);
        const removed = await request.admin.run(removeCarrier, account.id, request.admin.actor, request.admin.now());
        const text = removed
          ? "Removed: calls now go through the agency's carrier, or the service's default."
          : 'There was no carrier of its own: nothing changed.';
        return reply.seeOther(place.base(account.id), { kind: 'ok', text });
      },
    );

    // The agency's switch: only on the agency's own page (a client has none).
    if (place.managed === 'own')
      fastify.post(
        `${place.prefix}/clients-choose`,
        {
          schema: { hide: true, body: ClientsChooseForm },
          attachValidation: true,
          config: {
            role: 'admin',
            formFailure: (request, reply, failure) => {
              if (accountOf(request).kind !== 'agency') throw fastify.httpErrors.notFound();
              return render(request, reply, failure.status, { choose: { problem: failure.message } });
            },
          },
        },
        async (request, reply) => {
          const account = accountOf(request);
          if (account.kind !== 'agency') throw fastify.httpErrors.notFound();
          const allowed = request.body.allowed === 'on';
          await request.admin.run(
            setClientsChooseCarrier,
            account.id,
            allowed,
            request.admin.actor,
            request.admin.now(),
          );
          const text = allowed
            ? 'Clients may now set a carrier of their own.'
            : "Every client's calls now go through the agency's carrier.";
          return reply.seeOther(place.base(account.id), { kind: 'ok', text });
        },
      );
  };
}

/** The viewer's own account's carrier: in the signed-in family. */
export const ownCarrier = routesOf(OWN_CARRIER);
/** A client's carrier: in the agency-only family. */
export const clientCarrier = routesOf(CLIENT_CARRIER);
