// The sign-in page's model: what src/views/pages/sign-in.eta reads (with the partials it includes).
import type { KeysOf, Problem } from './model-parts.js';

export type SignInModel = { email: string; next: string; problem: Problem };

/** The fields sign-in.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const SIGN_IN_FIELDS = ['email', 'next', 'problem'] as const satisfies readonly KeysOf<SignInModel>[];
