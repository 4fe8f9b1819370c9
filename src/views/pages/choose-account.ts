// The choose-account page's model: what src/views/pages/choose-account.eta reads (with the partials it includes).
import type { KeysOf, Problem } from './model-parts.js';

export type ChooseAccountModel = { choices: { userId: string; accountName: string }[]; problem: Problem };

/** The fields choose-account.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CHOOSE_ACCOUNT_FIELDS = ['choices', 'problem'] as const satisfies readonly KeysOf<ChooseAccountModel>[];
