// The audit log's vocabulary, written once: each action's name (stored) and how the Audit log page says it.
export const AUDIT_ACTIONS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in failed (wrong password)',
  sign_out: 'Signed out',
  sessions_ended: 'Ended all sessions',
  password_set: 'Set a password from a one-time link (their other links stopped working)',
  password_changed: 'Changed password',
  time_zone_set: 'Set the time zone their dashboard shows times in',
  user_created: 'User created',
  user_disabled: 'User disabled',
  user_invited: 'User invited',
  user_enabled: 'User enabled again',
  user_role_changed: 'Role of a user changed (owner, admin, member or viewer)',
  sign_in_link_created: 'New one-time sign-in link made (earlier links stopped working)',
  password_reset_requested:
    'Password reset link e-mailed ("Forgot your password?"; earlier reset links stopped working)',
  people_link_refused: 'Invitation or new sign-in link refused: over the limit (nothing made, nothing e-mailed)',
  email_sent: 'E-mail sent (an invitation, a new sign-in link or a password reset link)',
  client_created: 'Client created',
  key_generated: 'API key generated (the previous key stopped working)',
  api_access_switched: 'API access switched',
  default_agent_changed: 'Default agent changed',
  webhook_set: 'Webhook URL set (new signing secret)',
  webhook_url_changed: 'Webhook URL changed (signing secret kept)',
  webhook_enabled: 'Webhook endpoint enabled again',
  webhook_disabled: 'Webhook endpoint disabled (it answered 410 Gone)',
  deliveries_resent: 'Webhook deliveries resent',
  agent_created: 'Agent created',
  agent_changed: 'Agent changed',
  agent_archived: 'Agent archived (new triggers cannot use it)',
  agent_restored: 'Agent restored from the archive',
  call_canceled: 'Call canceled (it was still waiting; it ended failed, reason canceled)',
  do_not_call_added: 'Number added to the do-not-call list',
  do_not_call_removed: 'Number removed from the do-not-call list',
  do_not_call_imported: 'Numbers imported into the do-not-call list (CSV)',
  do_not_call_import_refused: 'Do-not-call import refused (another under way, or too many)',
  calling_rules_changed:
    'Calling rules changed (on or off, rule sets, kinds of call, cap per number, consent required)',
  calling_hours_added: 'Calling hours added (a rule of its own)',
  calling_hours_replaced: 'Calling hours changed (a rule of its own)',
  calling_hours_removed: 'Calling hours removed (a rule of its own)',
  carrier_set: 'Carrier set (its credentials checked and stored sealed)',
  carrier_removed: "Carrier removed (calls go through the agency's or the service's)",
  carrier_clients_choose: 'Clients allowed or no longer allowed to set their own carrier',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export function describeAuditAction(action: string): string {
  return (AUDIT_ACTIONS as Record<string, string>)[action] ?? action;
}
