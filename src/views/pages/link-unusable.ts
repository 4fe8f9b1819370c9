// The link-unusable page's model: what src/views/pages/link-unusable.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

export type LinkUnusableModel = { message: string };

/** The fields link-unusable.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const LINK_UNUSABLE_FIELDS = ['message'] as const satisfies readonly KeysOf<LinkUnusableModel>[];
