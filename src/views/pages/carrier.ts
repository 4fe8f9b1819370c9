// The Carrier page's model: what src/views/pages/carrier.eta reads. The account's carrier (whose: its own, its
// agency's or the service's default; the parts that are not secret; when it was checked; its numbers), a form per
// provider for those who may set it (secret fields never filled in, never sent back), Remove, and on an agency's own
// page its switch letting clients choose their own carrier.
import type { FastifyRequest } from 'fastify';
import { showCarrier, type CarrierView, type EnvironmentCarrier } from '../../admin/carriers.js';
import { CARRIER_CREDENTIALS, CARRIER_PROVIDERS, PROVIDER_NAMES, secretFields } from '../../../schemas/carrier.js';
import { hasRole } from '../../domain/roles.js';
import type { AccountInScope } from '../../storage/index.js';
import type { FieldProblems } from '../form-problem.js';
import type { PageData } from '../page-models.js';
import type { KeysOf, Problem, SectionAccount } from './model-parts.js';

/** Each credential's label for people (schemas/carrier.ts says what it must be). */
const LABELS: Record<string, string> = {
  account_sid: 'Account SID',
  auth_token: 'Auth token',
  api_key: 'API key',
  connection_id: 'Connection id (Call Control application)',
  public_key: 'Public key',
  space_url: 'Space URL',
  project_id: 'Project ID',
  token: 'API token',
  signing_key: 'Signing key',
};

interface CredentialField {
  name: string;
  label: string;
  hint: string;
  secret: boolean;
  /** What was typed (a refused form shown again); always '' for a secret. */
  value: string;
  error: string | null;
}

export type CarrierModel = {
  account: SectionAccount;
  /** The page: /dashboard/settings/carrier or a client's. */
  base: string;
  carrier: {
    provider: string;
    source: string;
    shown: { label: string; value: string }[];
    checkedAt: string | null;
    /** The carrier's numbers; null when it does not list them. */
    numbers: string[] | null;
    /** The service's default: its numbers are not read (nor agents' caller IDs checked against them). */
    isDefault: boolean;
  };
  /** A refusal above the page (Remove's), or null. */
  problem: Problem;
  /** The viewer may remove this account's own carrier (the button is shown only then); the forms likewise. */
  canRemove: boolean;
  /** Why the forms are not shown to someone whose role would allow them (the agency sets it); else null. */
  locked: string | null;
  /** A client's own carrier set while its agency does not let clients choose: stored, not used. */
  unusedHint: string | null;
  /** Why no carrier can be set with this service's configuration (PUBLIC_BASE_URL), or null. */
  configProblem: string | null;
  forms: { provider: string; name: string; open: boolean; problem: Problem; fields: CredentialField[] }[];
  /** The agency's switch (its own page only). */
  clientsChoose: { allowed: boolean; canChange: boolean; problem: Problem } | null;
};

/** The fields carrier.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CARRIER_FIELDS = [
  'account',
  'base',
  'carrier',
  'problem',
  'canRemove',
  'locked',
  'unusedHint',
  'configProblem',
  'forms',
  'clientsChoose',
] as const satisfies readonly KeysOf<CarrierModel>[];

/** The two places the page is: the viewer's own account's, and (agency users) a client's. */
export interface CarrierPlace {
  prefix: string;
  managed: 'own' | 'client';
  param?: string;
  base(accountId: string): string;
}

export const OWN_CARRIER: CarrierPlace = {
  prefix: '/settings/carrier',
  managed: 'own',
  base: () => '/dashboard/settings/carrier',
};

export const CLIENT_CARRIER: CarrierPlace = {
  prefix: '/clients/:id/carrier',
  managed: 'client',
  param: 'id',
  base: (accountId) => `/dashboard/clients/${accountId}/carrier`,
};

/** A refused form, shown again: the provider's form open, what was typed (never a secret), the problems. */
export interface CarrierPageInput {
  /** A refusal that is no form's (Remove). */
  problem?: string;
  form?: { provider: string; values: Record<string, string>; problem: Problem; fields: FieldProblems };
  choose?: { problem: string };
}

/** The environment and what it allows, as the route reads them from the configuration. */
export interface CarrierSettings {
  environment: EnvironmentCarrier;
  /** Why no carrier can be set (carrierSetRefusal), or null. */
  refusal: string | null;
}

function sourceWords(view: CarrierView): string {
  if (view.source === 'environment') return "The service's default carrier (set by its operator)";
  if (view.source === 'agency') return "The agency's carrier";
  return view.account_kind === 'agency' ? "The agency's own carrier" : `${view.account_name}'s own carrier`;
}

function formsOf(input: CarrierPageInput['form']): CarrierModel['forms'] {
  return CARRIER_PROVIDERS.map((provider) => {
    const properties = CARRIER_CREDENTIALS[provider].properties as Record<string, { description?: string }>;
    const secret = new Set(secretFields(provider));
    const mine = input?.provider === provider ? input : undefined;
    return {
      provider,
      name: PROVIDER_NAMES[provider],
      open: mine !== undefined,
      problem: mine?.problem ?? null,
      fields: Object.entries(properties).map(([name, property]) => ({
        name,
        label: LABELS[name] ?? name,
        hint: property.description ?? '',
        secret: secret.has(name),
        value: secret.has(name) ? '' : (mine?.values[name] ?? '').slice(0, 1000),
        error: mine?.fields[name] ?? null,
      })),
    };
  });
}

/** The page of `account` (the viewer's own, or a client's an agency user manages). */
export async function carrierPage(
  request: FastifyRequest,
  account: AccountInScope,
  place: CarrierPlace,
  settings: CarrierSettings,
  input: CarrierPageInput = {},
): Promise<PageData<'carrier'>> {
  const view = await request.admin.run(showCarrier, account.id, request.admin.actor, settings.environment);
  const admin = hasRole(request.role, 'admin');
  const canSet = admin && view.editable;
  const onClientPage = place.managed === 'client';
  return {
    title: onClientPage ? `Carrier of ${account.name}` : 'Carrier',
    account: { id: account.id, name: account.name, kind: account.kind },
    base: place.base(account.id),
    carrier: {
      // "The simulated dialer" starts the line it stands on.
      provider: PROVIDER_NAMES[view.provider].replace(/^./, (first) => first.toUpperCase()),
      source: sourceWords(view),
      shown: Object.entries(view.shown).map(([name, value]) => ({ label: LABELS[name] ?? name, value })),
      checkedAt: view.checked_at ? request.times.time(new Date(view.checked_at)) : null,
      numbers: view.numbers,
      isDefault: view.source === 'environment',
    },
    // A form refused while no form is shown (a client's own, which its agency sets): its words above the page.
    problem:
      input.problem ?? (canSet ? null : (input.form?.problem ?? Object.values(input.form?.fields ?? {})[0] ?? null)),
    canRemove: canSet && view.source === 'account',
    locked:
      admin && !view.editable
        ? 'The agency sets the carrier of this account: it may let its clients choose their own.'
        : null,
    unusedHint:
      canSet && view.account_kind === 'client' && !view.clients_choose_carrier
        ? "The agency does not let its clients choose their carrier: a carrier set here is used only once it does (on the agency's Carrier page)."
        : null,
    configProblem: canSet ? settings.refusal : null,
    forms: canSet && !settings.refusal ? formsOf(input.form) : [],
    clientsChoose:
      account.kind === 'agency' && !onClientPage
        ? {
            allowed: view.clients_choose_carrier,
            canChange: admin && request.scope.kind === 'agency',
            problem: input.choose?.problem ?? null,
          }
        : null,
  };
}
