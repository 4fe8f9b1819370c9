// The set-password page's model: what src/views/pages/set-password.eta reads (with the partials it includes).
import type { KeysOf, PasswordPolicy, Problem } from './model-parts.js';

export type SetPasswordModel = { email: string; action: string; policy: PasswordPolicy; problem: Problem };

/** The fields set-password.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const SET_PASSWORD_FIELDS = [
  'email',
  'action',
  'policy',
  'problem',
] as const satisfies readonly KeysOf<SetPasswordModel>[];
