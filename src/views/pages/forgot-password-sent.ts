// The forgot-password-sent page's model: what src/views/pages/forgot-password-sent.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

export type ForgotPasswordSentModel = { email: string };

/** The fields forgot-password-sent.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const FORGOT_PASSWORD_SENT_FIELDS = ['email'] as const satisfies readonly KeysOf<ForgotPasswordSentModel>[];
