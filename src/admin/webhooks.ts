// An account's webhook endpoint (set, show, enable again after a 410, which sends the deliveries held while it was
// off), and sending deliveries again (one, or every failed one since a time). Each change is audited in its
// transaction when an actor is given (callctl and the dashboard always give one); an account or a delivery the actor
// does not reach is one that does not exist.
import { generateWebhookSecret } from '../domain/webhook-secret.js';
import { type Storage } from '../storage/index.js';
import { webhookUrlProblem } from '../webhooks/url-policy.js';
import { ChangedMeanwhile } from './accounts.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';
import { findAccount, reaches } from './reach.js';
import { isUuid } from '../../schemas/uuid.js';

/** No such delivery (or, when asked within an account, not one of its endpoint's; or not one the actor reaches). */
export class NoSuchDelivery extends AdminError {
  override name = 'NoSuchDelivery';
}

/**
 * Sets (or replaces) the endpoint; the signing secret is new and returned once. A disabled endpoint stays disabled
 * (`enabled` says so): its held deliveries wait for "Enable again", once the receiver knows the new secret. Pending
 * deliveries go to the new URL, signed with the new secret, with their webhook-ids unchanged. With `replaces` (the
 * `updatedAt` of the endpoint the caller saw, null for none), only when the endpoint is still that one; else
 * ChangedMeanwhile.
 */
export async function setWebhook(
  storage: Storage,
  accountId: string,
  url: string,
  options: { allowPrivate: boolean; replaces?: Date | null; now: Date },
  actor?: Actor,
) {
  const account = await findAccount(storage, accountId, actor);
  const problem = webhookUrlProblem(url, options.allowPrivate);
  if (problem) throw new AdminError(problem);
  const secret = generateWebhookSecret();
  const now = options.now;
  const changed = await storage.transaction(async (tx) => {
    const done = await tx.endpoints.upsertEndpoint(
      account.id,
      { url, secret },
      { now, ...(options.replaces !== undefined ? { replaces: options.replaces } : {}) },
    );
    if (done && actor) await audit(tx, account.id, actor, 'webhook_set', now, { url });
    return done && (await tx.endpoints.findEndpointOfAccount(account.id));
  });
  if (!changed)
    throw new ChangedMeanwhile(
      `The webhook endpoint of account ${account.id} changed since this was asked; nothing was set`,
    );
  return { secret, enabled: changed.enabled };
}

/**
 * Changes the URL of the account's endpoint and keeps its signing secret (the receiver goes on verifying with it), its
 * state and its deliveries (those still to send go to the new URL). Only when the endpoint is still the one the caller
 * saw (`replaces`, its `updatedAt`); else ChangedMeanwhile, and nothing changes. setWebhook makes a new secret.
 */
export async function changeWebhookUrl(
  storage: Storage,
  accountId: string,
  url: string,
  options: { allowPrivate: boolean; replaces: Date; now: Date },
  actor: Actor,
) {
  const account = await findAccount(storage, accountId, actor);
  const problem = webhookUrlProblem(url, options.allowPrivate);
  if (problem) throw new AdminError(problem);
  const now = options.now;
  const changed = await storage.transaction(async (tx) => {
    const current = await tx.endpoints.findEndpointOfAccount(account.id);
    if (!current || current.updatedAt.getTime() !== options.replaces.getTime()) return null;
    // The same secret written back, under the same version check as a new one.
    const done = await tx.endpoints.upsertEndpoint(
      account.id,
      { url, secret: current.secret },
      { now, replaces: options.replaces },
    );
    if (!done) return null;
    await audit(tx, account.id, actor, 'webhook_url_changed', now, { url, previous_url: current.url });
    return current;
  });
  if (!changed)
    throw new ChangedMeanwhile(
      `The webhook endpoint of account ${account.id} changed since this was asked; nothing was changed`,
    );
  return { url, enabled: changed.enabled };
}

function disabledProblem(endpoint: { disabledReason: string | null; accountId: string }): string {
  return `The endpoint is disabled (${endpoint.disabledReason ?? 'by an operator'}): enable it again first ("Enable again" in the dashboard, or callctl webhook enable ${endpoint.accountId})`;
}

/**
 * Sends a delivery again with the same webhook-id and body: back to pending, due now. Not while it is pending (it
 * could be sent twice at once) nor while its endpoint is disabled. With `accountId`, only a delivery of that
 * account's endpoint (any other is NoSuchDelivery). The change is conditional on the state read here: of concurrent
 * resends of one delivery exactly one sends it; the others are told it is being sent already.
 */
export async function replayDelivery(
  storage: Storage,
  deliveryId: string,
  actor: Actor | undefined,
  options: { accountId?: string; now: Date },
) {
  const delivery = isUuid(deliveryId) ? await storage.deliveries.findDeliveryWithEndpoint(deliveryId) : null;
  // The endpoint's account as stored (its agency_id is the Overview's, filled by a trigger).
  const owner = delivery && (await storage.accounts.findAccountById(delivery.endpoint.accountId));
  if (
    !delivery ||
    !owner ||
    !reaches(actor, owner) ||
    (options.accountId !== undefined && owner.id !== options.accountId)
  )
    throw new NoSuchDelivery(`No delivery ${deliveryId}`);
  if (!delivery.endpoint.enabled) throw new AdminError(disabledProblem(delivery.endpoint));
  if (delivery.status === 'pending')
    throw new AdminError(`Delivery ${deliveryId} is still pending; it will be sent without a replay`);
  const now = options.now;
  const seen = { status: delivery.status, lastAttemptAt: delivery.lastAttemptAt };
  await storage.transaction(async (tx) => {
    if (!(await tx.deliveries.requeueDelivery(delivery.id, now, seen)))
      throw new AdminError(
        `Delivery ${deliveryId} is already being sent again (another resend came first); it will be sent once`,
      );
    if (actor)
      await audit(tx, delivery.endpoint.accountId, actor, 'deliveries_resent', now, {
        delivery_id: delivery.id,
        event_type: delivery.eventType,
        call_id: delivery.callId,
      });
  });
  return { id: delivery.id, status: 'pending' as const };
}

/** Sends again every failed delivery of the account's endpoint created at or after `since`, in one statement. */
export async function resendFailedDeliveries(
  storage: Storage,
  accountId: string,
  since: Date,
  actor: Actor,
  now: Date,
) {
  const account = await findAccount(storage, accountId, actor);
  const endpoint = await storage.endpoints.findEndpointOfAccount(account.id);
  if (!endpoint) throw new AdminError(`Account ${account.id} has no webhook endpoint`);
  if (!endpoint.enabled) throw new AdminError(disabledProblem(endpoint));
  const resent = await storage.transaction(async (tx) => {
    const count = await tx.deliveries.requeueFailedDeliveriesSince(endpoint.id, since, now);
    if (count > 0)
      await audit(tx, account.id, actor, 'deliveries_resent', now, { failed_since: since.toISOString(), count });
    return count;
  });
  return { account_id: account.id, since: since.toISOString(), resent };
}

/** The endpoint, whether it is on (and why not), and its deliveries still to send and given up on; null when none is set. */
export async function showWebhook(storage: Storage, accountId: string, actor: Actor) {
  const account = await findAccount(storage, accountId, actor);
  const endpoint = await storage.endpoints.findEndpointOfAccount(account.id);
  if (!endpoint) return { webhook: null };
  const { pending, held, heldSince, failed } = await storage.deliveries.countOpenDeliveries(endpoint.id);
  return {
    webhook: {
      url: endpoint.url,
      enabled: endpoint.enabled,
      disabled_reason: endpoint.disabledReason,
      pending,
      held,
      held_since: heldSince?.toISOString() ?? null,
      failed,
    },
  };
}

/**
 * Switches a disabled endpoint (a 410 Gone) back on, keeping its URL and signing secret: the receiver need not be
 * told a new one. The deliveries held while it was off (`released`: the events that happened meanwhile and those
 * pending when it was switched off, the one answered 410 included) are sent, with their webhook-ids, in the same
 * transaction. Says what it was before and when it changed, for the operator's record. Deliveries whose attempts ran
 * out (failed) stay failed (replay or resend sends them).
 */
export async function enableWebhook(storage: Storage, accountId: string, actor: Actor | undefined, now: Date) {
  const account = await findAccount(storage, accountId, actor);
  const endpoint = await storage.endpoints.findEndpointOfAccount(account.id);
  if (!endpoint)
    throw new AdminError(
      `Account ${account.id} has no webhook endpoint; set one with callctl webhook set ${account.id} --url <url>`,
    );
  // Only a disabled endpoint changes: enabling twice at once records one change.
  const { changed, released } = await storage.transaction(async (tx) => {
    const done = await tx.endpoints.enableEndpoint(endpoint.id, now);
    if ((done.changed || done.released > 0) && actor) {
      await audit(tx, account.id, actor, 'webhook_enabled', now, {
        url: endpoint.url,
        previously_disabled: endpoint.disabledReason,
        released: done.released,
      });
    }
    return done;
  });
  return {
    account_id: account.id,
    url: endpoint.url,
    enabled: true,
    previously: { enabled: endpoint.enabled, disabled_reason: endpoint.disabledReason },
    changed_at: changed ? now.toISOString() : null,
    released,
  };
}
