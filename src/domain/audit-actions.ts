// The audit log's vocabulary, written once: each action's name (stored) and how the Audit log page says it.
export const AUDIT_ACTIONS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in failed (wrong password)',
  sign_out: 'Signed out',
  sessions_ended: 'Ended all sessions',
  password_set: 'Set a password from a one-time link',
  password_changed: 'Changed password',
  user_created: 'User created',
  user_disabled: 'User disabled',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export function describeAuditAction(action: string): string {
  return (AUDIT_ACTIONS as Record<string, string>)[action] ?? action;
}
