// The error page's model: what src/views/pages/error.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

export type ErrorModel = { message: string };

/** The fields error.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const ERROR_FIELDS = ['message'] as const satisfies readonly KeysOf<ErrorModel>[];
