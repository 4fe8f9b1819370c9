// Who may run each src/admin action (src/domain/roles.ts), declared once for callctl and the dashboard: the operator
// (callctl) runs every one; a dashboard request runs one only with at least its role in the account it acts on
// (plugins/dashboard/admin.ts checks it, after the route's own declaration: plugins/dashboard/roles.ts). 'public':
// no sign-in (signing in, a one-time link) or a user's own record; 'operator': callctl only, never the dashboard.
// test/admin/action-roles.test.ts fails for an exported action (a function taking the storage) missing here.
import type { Role } from '../domain/roles.js';
import { accountCountry } from './account-country.js';
import { createAgency, createClient, generateKey, setApiAccess, setPlan } from './accounts.js';
import { createAgent, setAgentArchived, setDefaultAgent, updateAgent } from './agents.js';
import {
  putCallingHours,
  removeCallingHours,
  setCallingRules,
  setOwnCallingHours,
  showCallingRules,
} from './calling-rules.js';
import { cancelCall, cancelCalls, listCalls, showCall } from './calls.js';
import { carrierInUse, removeCarrier, setCarrier, setClientsChooseCarrier, showCarrier } from './carriers.js';
import { importDoNotCall } from './do-not-call-import.js';
import { addToDoNotCall, listDoNotCall, removeFromDoNotCall } from './do-not-call.js';
import { authenticate, completeChosenSignIn, recordSignOut } from './sign-in.js';
import { newSignInLink, requestPasswordReset, resolveUser, sendAuditedMail } from './user-links.js';
import { setUserRole } from './user-roles.js';
import { setOwnTimeZone } from './user-time-zone.js';
import {
  changePassword,
  checkPassword,
  createUser,
  disableUser,
  enableUser,
  endAllSessions,
  inviteUser,
  setPasswordWithLink,
  setupAgency,
  usableLink,
} from './users.js';
import {
  changeWebhookUrl,
  enableWebhook,
  replayDelivery,
  resendFailedDeliveries,
  setWebhook,
  showWebhook,
} from './webhooks.js';

export type ActionRole = Role | 'public' | 'operator';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of functions of every signature
type AnyAction = (...args: any[]) => unknown;

const DECLARED: [ActionRole, AnyAction[]][] = [
  // carrierInUse: the service's own read of the credentials it dials with.
  ['operator', [createAgency, setPlan, setupAgency, createUser, carrierInUse]],
  // Signing in, a one-time link, a user's own password, sessions and zone: the person's own record.
  [
    'public',
    [
      authenticate,
      completeChosenSignIn,
      recordSignOut,
      requestPasswordReset,
      usableLink,
      setPasswordWithLink,
      sendAuditedMail,
      checkPassword,
      changePassword,
      endAllSessions,
      setOwnTimeZone,
    ],
  ],
  ['viewer', [accountCountry, listCalls, showCall, listDoNotCall, showCallingRules, showCarrier]],
  [
    'member',
    [
      createAgent,
      updateAgent,
      setAgentArchived,
      cancelCall,
      cancelCalls,
      addToDoNotCall,
      removeFromDoNotCall,
      importDoNotCall,
    ],
  ],
  [
    'admin',
    [
      createClient,
      generateKey,
      setApiAccess,
      setDefaultAgent,
      setWebhook,
      changeWebhookUrl,
      enableWebhook,
      replayDelivery,
      resendFailedDeliveries,
      showWebhook,
      setCallingRules,
      putCallingHours,
      removeCallingHours,
      setOwnCallingHours,
      setCarrier,
      removeCarrier,
      setClientsChooseCarrier,
    ],
  ],
  ['owner', [inviteUser, newSignInLink, resolveUser, disableUser, enableUser, setUserRole]],
];

const ROLE_OF = new Map<AnyAction, ActionRole>(DECLARED.flatMap(([role, actions]) => actions.map((a) => [a, role])));

/** The role `action` is declared with; undefined for a function that is no declared action. */
export function actionRole(action: AnyAction): ActionRole | undefined {
  return ROLE_OF.get(action);
}
