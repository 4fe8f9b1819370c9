// The cancel-confirm page's model: what src/views/pages/cancel-confirm.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

/** The step before cancelling waiting calls (src/routes/dashboard/call-cancel.ts): its title asks how many. */
export type CancelConfirmModel = {
  /** Where the button posts (the form's own action, with confirm=yes). */
  action: string;
  /** The calls the list's form cancels (those still waiting), carried to the second POST; empty for one call's. */
  callIds: string[];
  /** The list's query string to come back to (the list's form), or null (one call's form). */
  back: string | null;
  /** What becomes of the calls, in words. */
  consequence: string;
  /** Ticked calls that no longer wait and stay as they are, in words; null when none. */
  notWaiting: string | null;
  confirmLabel: string;
  /** Where "Keep …" goes back to, cancelling nothing. */
  keepHref: string;
  keepLabel: string;
};

/** The fields cancel-confirm.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CANCEL_CONFIRM_FIELDS = [
  'action',
  'callIds',
  'back',
  'consequence',
  'notWaiting',
  'confirmLabel',
  'keepHref',
  'keepLabel',
] as const satisfies readonly KeysOf<CancelConfirmModel>[];
