// The forgot-password page's model: what src/views/pages/forgot-password.eta reads (with the partials it includes).
import type { KeysOf, Problem } from './model-parts.js';

export type ForgotPasswordModel = { email: string; problem: Problem };

/** The fields forgot-password.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const FORGOT_PASSWORD_FIELDS = ['email', 'problem'] as const satisfies readonly KeysOf<ForgotPasswordModel>[];
