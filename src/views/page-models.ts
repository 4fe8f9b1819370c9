// What each dashboard template reads: one model type per template, beside it (src/views/pages/<name>.ts next to
// <name>.eta), so `reply.page('calls', model)` does not compile when the model and the template disagree. The layout's
// own fields are the layout model, which `reply.page` adds (plugins/dashboard/pages.ts). PAGE_FIELDS lists the same
// fields at run time: test/dashboard/page-models.test.ts compares them with the `it.*` the templates read.
import { ACCOUNT_FIELDS, type AccountModel } from './pages/account.js';
import { AGENT_FORM_FIELDS, type AgentFormModel } from './pages/agent-form.js';
import { AGENTS_FIELDS, type AgentsModel } from './pages/agents.js';
import { API_WEBHOOKS_FIELDS, type ApiWebhooksModel } from './pages/api-webhooks.js';
import { API_WEBHOOKS_ACCESS_FIELDS, type ApiWebhooksAccessModel } from './pages/api-webhooks-access.js';
import { API_WEBHOOKS_DELIVERIES_FIELDS, type ApiWebhooksDeliveriesModel } from './pages/api-webhooks-deliveries.js';
import { API_WEBHOOKS_KEY_FIELDS, type ApiWebhooksKeyModel } from './pages/api-webhooks-key.js';
import { API_WEBHOOKS_SECRET_FIELDS, type ApiWebhooksSecretModel } from './pages/api-webhooks-secret.js';
import { API_WEBHOOKS_WEBHOOK_FIELDS, type ApiWebhooksWebhookModel } from './pages/api-webhooks-webhook.js';
import { AUDIT_LOG_FIELDS, type AuditLogModel } from './pages/audit-log.js';
import { CALL_FIELDS, type CallModel } from './pages/call.js';
import { CALLING_RULES_FIELDS, type CallingRulesModel } from './pages/calling-rules.js';
import { CARRIER_FIELDS, type CarrierModel } from './pages/carrier.js';
import { CALLS_FIELDS, type CallsModel } from './pages/calls.js';
import { CANCEL_CONFIRM_FIELDS, type CancelConfirmModel } from './pages/cancel-confirm.js';
import { CLIENT_FIELDS, type ClientModel } from './pages/client.js';
import { CLIENTS_FIELDS, type ClientsModel } from './pages/clients.js';
import { CHOOSE_ACCOUNT_FIELDS, type ChooseAccountModel } from './pages/choose-account.js';
import { CONFIRM_PASSWORD_FIELDS, type ConfirmPasswordModel } from './pages/confirm-password.js';
import { DO_NOT_CALL_FIELDS, type DoNotCallModel } from './pages/do-not-call.js';
import { ERROR_FIELDS, type ErrorModel } from './pages/error.js';
import { FORGOT_PASSWORD_FIELDS, type ForgotPasswordModel } from './pages/forgot-password.js';
import { FORGOT_PASSWORD_SENT_FIELDS, type ForgotPasswordSentModel } from './pages/forgot-password-sent.js';
import { LINK_UNUSABLE_FIELDS, type LinkUnusableModel } from './pages/link-unusable.js';
import { OVERVIEW_FIELDS, type OverviewModel } from './pages/overview.js';
import { SET_PASSWORD_FIELDS, type SetPasswordModel } from './pages/set-password.js';
import { SIGN_IN_FIELDS, type SignInModel } from './pages/sign-in.js';
import { USERS_INVITE_FIELDS, type UsersInviteModel } from './pages/users-invite.js';
import { USERS_LINK_FIELDS, type UsersLinkModel } from './pages/users-link.js';
import { USERS_FIELDS, type UsersModel } from './pages/users.js';
import type { LayoutModel, PageLocals } from './pages/layout.js';
import type { KeysOf } from './pages/model-parts.js';

export type { LayoutModel, PageLocals };

export interface PageModels {
  account: AccountModel;
  'agent-form': AgentFormModel;
  agents: AgentsModel;
  'api-webhooks': ApiWebhooksModel;
  'api-webhooks-access': ApiWebhooksAccessModel;
  'api-webhooks-deliveries': ApiWebhooksDeliveriesModel;
  'api-webhooks-key': ApiWebhooksKeyModel;
  'api-webhooks-secret': ApiWebhooksSecretModel;
  'api-webhooks-webhook': ApiWebhooksWebhookModel;
  'audit-log': AuditLogModel;
  call: CallModel;
  'calling-rules': CallingRulesModel;
  carrier: CarrierModel;
  calls: CallsModel;
  'cancel-confirm': CancelConfirmModel;
  client: ClientModel;
  clients: ClientsModel;
  'choose-account': ChooseAccountModel;
  'confirm-password': ConfirmPasswordModel;
  'do-not-call': DoNotCallModel;
  error: ErrorModel;
  'forgot-password': ForgotPasswordModel;
  'forgot-password-sent': ForgotPasswordSentModel;
  'link-unusable': LinkUnusableModel;
  overview: OverviewModel;
  'set-password': SetPasswordModel;
  'sign-in': SignInModel;
  'users-invite': UsersInviteModel;
  'users-link': UsersLinkModel;
  users: UsersModel;
}

export type PageName = keyof PageModels;

/** What a page passes to `reply.page`: its template's model, its title and whether it is live (reply.page adds the rest). */
export type PageData<K extends PageName> = PageModels[K] & Pick<LayoutModel, 'title' | 'live'>;

/** Fields the layout model gives every template (`body` is Eta's: the page rendered inside the layout). */
export const LAYOUT_FIELDS = [
  'title',
  'viewer',
  'navigation',
  'can',
  'csrf',
  'hasSession',
  'flash',
  'pageUrl',
  'times',
  'live',
  'body',
] as const;
/** Fields of the reply's locals (PageLocals). */
export const LOCALS_FIELDS = ['mailEnabled'] as const satisfies readonly (keyof PageLocals)[];

/** Each model's fields, at run time; `satisfies` and the check below keep it equal to the types. */
export const PAGE_FIELDS = {
  account: ACCOUNT_FIELDS,
  'agent-form': AGENT_FORM_FIELDS,
  agents: AGENTS_FIELDS,
  'api-webhooks': API_WEBHOOKS_FIELDS,
  'api-webhooks-access': API_WEBHOOKS_ACCESS_FIELDS,
  'api-webhooks-deliveries': API_WEBHOOKS_DELIVERIES_FIELDS,
  'api-webhooks-key': API_WEBHOOKS_KEY_FIELDS,
  'api-webhooks-secret': API_WEBHOOKS_SECRET_FIELDS,
  'api-webhooks-webhook': API_WEBHOOKS_WEBHOOK_FIELDS,
  'audit-log': AUDIT_LOG_FIELDS,
  call: CALL_FIELDS,
  'calling-rules': CALLING_RULES_FIELDS,
  carrier: CARRIER_FIELDS,
  calls: CALLS_FIELDS,
  'cancel-confirm': CANCEL_CONFIRM_FIELDS,
  client: CLIENT_FIELDS,
  clients: CLIENTS_FIELDS,
  'choose-account': CHOOSE_ACCOUNT_FIELDS,
  'confirm-password': CONFIRM_PASSWORD_FIELDS,
  'do-not-call': DO_NOT_CALL_FIELDS,
  error: ERROR_FIELDS,
  'forgot-password': FORGOT_PASSWORD_FIELDS,
  'forgot-password-sent': FORGOT_PASSWORD_SENT_FIELDS,
  'link-unusable': LINK_UNUSABLE_FIELDS,
  overview: OVERVIEW_FIELDS,
  'set-password': SET_PASSWORD_FIELDS,
  'sign-in': SIGN_IN_FIELDS,
  'users-invite': USERS_INVITE_FIELDS,
  'users-link': USERS_LINK_FIELDS,
  users: USERS_FIELDS,
} as const satisfies { [K in PageName]: readonly KeysOf<PageModels[K]>[] };

/** Compiles only when every field of every model is in PAGE_FIELDS (the `satisfies` above checks the other way). */
type Missing = { [K in PageName]: Exclude<KeysOf<PageModels[K]>, (typeof PAGE_FIELDS)[K][number]> }[PageName];
const everyFieldListed: [Missing] extends [never] ? true : Missing = true;
void everyFieldListed;
