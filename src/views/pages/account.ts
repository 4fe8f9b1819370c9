// The account page's model: what src/views/pages/account.eta reads (with the partials it includes).
import type { KeysOf, PasswordPolicy, Problem } from './model-parts.js';

export type AccountModel = { lastSignIn: string | null; policy: PasswordPolicy; problem: Problem };

/** The fields account.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const ACCOUNT_FIELDS = ['lastSignIn', 'policy', 'problem'] as const satisfies readonly KeysOf<AccountModel>[];
