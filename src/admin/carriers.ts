// The carrier an account dials through (PRODUCT.md, "Placing calls"), for callctl and the dashboard alike: show it
// (the account's own, its agency's, or the environment's), set it (credentials checked at the carrier first, sealed,
// never shown again), remove it, and an agency's switch that lets its clients set their own. An agency's users (and
// the operator) set an agency's and its clients' carriers; a client's users set their own only while the agency
// allows it. Every change is audited with what is not secret (provider, account SID, connection id, space).
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  CARRIER_CREDENTIALS,
  CARRIER_PROVIDERS,
  PROVIDER_NAMES,
  shownCredentials,
  type CarrierCredentials,
  type CarrierProvider,
} from '../../schemas/carrier.js';
import type { CarrierAccountCheck } from '../dispatch/carrier-accounts.js';
import type { Repositories, Storage } from '../storage/index.js';
import { audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';
import { agencyOf, findAccount, scopeOfActor } from './reach.js';

/** The environment's carrier (DIALER): the default of every account without its own. */
export interface EnvironmentCarrier {
  provider: CarrierProvider | 'simulated';
  shown: Record<string, string>;
}

/** An account's carrier as callctl prints it and the dashboard shows it: nothing secret. */
export interface CarrierView {
  account_id: string;
  account_kind: 'agency' | 'client';
  account_name: string;
  provider: CarrierProvider | 'simulated';
  /** Whose carrier it is: the account's own, its agency's, or the environment's default. */
  source: 'account' | 'agency' | 'environment';
  shown: Record<string, string>;
  /** The carrier's numbers for the account when last checked; null when it does not list them (or the environment's). */
  numbers: string[] | null;
  checked_at: string | null;
  /** The agency's switch: whether its clients may set their own carrier. */
  clients_choose_carrier: boolean;
  /** Whether the actor may set this account's carrier. */
  editable: boolean;
}

/** A refusal of the credentials typed, naming the field (dashboard: beside it; callctl: the message). */
export class CarrierProblem extends AdminError {
  constructor(
    message: string,
    readonly field: string | null,
  ) {
    super(message);
  }
}

type Account = Awaited<ReturnType<typeof findAccount>>;

/** Whether `actor` may set `account`'s carrier: the operator, an agency's users, a client's while its agency allows. */
function maySet(actor: Actor | undefined, account: Account, agency: Account): boolean {
  const scope = scopeOfActor(actor);
  if (scope === null || scope.kind === 'agency') return true;
  return account.kind === 'client' && agency.clientsChooseCarrier;
}

/** The carrier calls of `accountId` are placed with: its own (a client's while its agency allows), its agency's, or null. */
export async function carrierInUse(storage: Repositories, accountId: string) {
  const account = await storage.accounts.findAccountById(accountId);
  if (!account) return null;
  const agency =
    account.kind === 'client' && account.agencyId ? await storage.accounts.findAccountById(account.agencyId) : account;
  if (account.kind === 'client' && agency?.clientsChooseCarrier) {
    const own = await storage.carriers.findCarrier(account.id);
    if (own) return { ...own, source: 'account' as const };
  }
  const ofAgency = agency ? await storage.carriers.findCarrier(agency.id) : null;
  return ofAgency && { ...ofAgency, source: account.kind === 'agency' ? ('account' as const) : ('agency' as const) };
}

/** The carrier of an account the actor reaches. */
export async function showCarrier(
  storage: Storage,
  accountId: string,
  actor: Actor | undefined,
  environment: EnvironmentCarrier,
): Promise<CarrierView> {
  const account = await findAccount(storage, accountId, actor);
  const agency = await agencyOf(storage, account);
  const own =
    account.kind === 'agency' || agency.clientsChooseCarrier
      ? await storage.carriers.findCarrierSummary(account.id)
      : null;
  const ofAgency =
    own === null && account.kind === 'client' ? await storage.carriers.findCarrierSummary(agency.id) : null;
  const used = own ?? ofAgency;
  return {
    account_id: account.id,
    account_kind: account.kind,
    account_name: account.name,
    provider: used?.provider ?? environment.provider,
    source: own ? 'account' : ofAgency ? 'agency' : 'environment',
    shown: used?.shown ?? environment.shown,
    numbers: used?.numbers ?? null,
    checked_at: used?.checkedAt.toISOString() ?? null,
    clients_choose_carrier: agency.clientsChooseCarrier,
    editable: maySet(actor, account, agency),
  };
}

/** The credentials typed for `provider`, checked at the field: a CarrierProblem names the first field refused. */
export function carrierInput(provider: string, credentials: Record<string, unknown>): CarrierCredentials {
  if (!(CARRIER_PROVIDERS as readonly string[]).includes(provider))
    throw new CarrierProblem(`Unknown carrier "${provider}": expected ${CARRIER_PROVIDERS.join(', ')}`, 'provider');
  const schema = CARRIER_CREDENTIALS[provider as CarrierProvider];
  const properties = schema.properties as Record<string, TSchema>;
  const given = Object.fromEntries(
    Object.entries(credentials)
      .filter(([, value]) => value !== undefined && value !== '')
      .map(([name, value]) => [name, typeof value === 'string' ? value.trim() : value]),
  );
  for (const name of Object.keys(given))
    if (!(name in properties))
      throw new CarrierProblem(`${PROVIDER_NAMES[provider as CarrierProvider]} takes no ${name}`, name);
  for (const [name, property] of Object.entries(properties)) {
    if (given[name] === undefined)
      throw new CarrierProblem(`${name} is required: ${String(property.description)}`, name);
    if (!Value.Check(property, given[name]))
      throw new CarrierProblem(`${name} is not valid: expected ${String(property.description)}`, name);
  }
  return { provider, credentials: given } as CarrierCredentials;
}

/**
 * Refuses to take away the carrier calls are live on: their callbacks are checked with its credentials (the call
 * records whose carrier dialled it), so removing it, or moving to another provider or account, would leave them
 * unable to end. Read inside the change's transaction; a call dialled at that very moment is the rare exception.
 */
async function refuseWhileLive(tx: Repositories, accountId: string, what: string): Promise<void> {
  const live = await tx.carriers.countLiveCalls(accountId);
  if (live > 0)
    throw new CarrierProblem(
      `${live === 1 ? '1 call is' : `${live} calls are`} live on this carrier: ${what} once ${live === 1 ? 'it has' : 'they have'} ended`,
      null,
    );
}

const sameAccountAt = (
  before: { provider: string; shown: Record<string, string> },
  after: { provider: string; shown: Record<string, string> },
) => before.provider === after.provider && JSON.stringify(before.shown) === JSON.stringify(after.shown);

/**
 * Sets the account's carrier: the credentials checked at the field, then at the carrier (`check`: a harmless
 * authenticated read, and its list of numbers), then stored sealed and audited. Nothing is stored when either refuses.
 */
export async function setCarrier(
  storage: Storage,
  accountId: string,
  input: { provider: string; credentials: Record<string, unknown> },
  actor: Actor | undefined,
  check: (carrier: CarrierCredentials) => Promise<CarrierAccountCheck>,
  now: Date,
): Promise<CarrierView & { numbers: string[] | null }> {
  const account = await findAccount(storage, accountId, actor);
  const agency = await agencyOf(storage, account);
  if (!maySet(actor, account, agency))
    throw new AdminError('Your agency sets the carrier of this account: ask it to let clients choose their own');
  const carrier = carrierInput(input.provider, input.credentials);
  const name = PROVIDER_NAMES[carrier.provider];
  let checked: CarrierAccountCheck;
  try {
    checked = await check(carrier);
  } catch (error) {
    throw new CarrierProblem(
      `${name} could not be reached to check these credentials: ${(error as Error).message}`,
      null,
    );
  }
  if (!checked.ok) throw new CarrierProblem(`${name} did not accept these credentials: ${checked.reason}`, null);
  const shown = shownCredentials(carrier);
  await storage.transaction(async (tx) => {
    const before = await tx.carriers.findCarrierSummary(account.id);
    if (before && !sameAccountAt(before, { provider: carrier.provider, shown }))
      await refuseWhileLive(tx, account.id, 'change it to another account');
    await tx.carriers.saveCarrier(account.id, carrier, { shown, numbers: checked.numbers, now });
    if (actor)
      await audit(tx, account.id, actor, 'carrier_set', now, {
        before: before && { provider: before.provider, ...before.shown },
        after: { provider: carrier.provider, ...shown },
      });
  });
  return showCarrier(storage, account.id, actor, { provider: carrier.provider, shown });
}

/** Removes the account's own carrier: its calls then go through its agency's, or the environment's. */
export async function removeCarrier(storage: Storage, accountId: string, actor: Actor | undefined, now: Date) {
  const account = await findAccount(storage, accountId, actor);
  const agency = await agencyOf(storage, account);
  if (!maySet(actor, account, agency))
    throw new AdminError('Your agency sets the carrier of this account: ask it to let clients choose their own');
  return storage.transaction(async (tx) => {
    const before = await tx.carriers.findCarrierSummary(account.id);
    if (!before) return false;
    await refuseWhileLive(tx, account.id, 'remove it');
    await tx.carriers.removeCarrier(account.id);
    if (actor)
      await audit(tx, account.id, actor, 'carrier_removed', now, {
        before: { provider: before.provider, ...before.shown },
      });
    return true;
  });
}

/** The agency's switch: whether its clients may set a carrier of their own (agency users and the operator). */
export async function setClientsChooseCarrier(
  storage: Storage,
  agencyId: string,
  allowed: boolean,
  actor: Actor | undefined,
  now: Date,
): Promise<void> {
  const account = await findAccount(storage, agencyId, actor);
  const scope = scopeOfActor(actor);
  if (account.kind !== 'agency' || (scope !== null && scope.kind !== 'agency'))
    throw new AdminError('Only an agency lets its clients choose their carrier');
  if (account.clientsChooseCarrier === allowed) return;
  await storage.transaction(async (tx) => {
    await tx.carriers.setClientsChooseCarrier(account.id, allowed);
    if (actor) await audit(tx, account.id, actor, 'carrier_clients_choose', now, { allowed });
  });
}
