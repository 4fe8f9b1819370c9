// The confirm-password page's model: what src/views/pages/confirm-password.eta reads (with the partials it includes).
import type { KeysOf, Problem } from './model-parts.js';

/** keptForm: a form sent meanwhile waits in the session and comes back filled in. */
export type ConfirmPasswordModel = { next: string; keptForm: boolean; problem: Problem };

/** The fields confirm-password.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CONFIRM_PASSWORD_FIELDS = [
  'next',
  'keptForm',
  'problem',
] as const satisfies readonly KeysOf<ConfirmPasswordModel>[];
