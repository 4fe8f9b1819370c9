// The agent form's problem above it (src/routes/dashboard/agents.ts): the fields' own words when every refused field
// has them, else the form's.
import type { FieldErrors } from '../../views/pages/agent-form-values.js';
import { FORM_NOT_VALID, type Refusal } from '../../views/form-problem.js';

export const FIELDS_PROBLEM = 'Some fields need a change: each says what is wrong next to it.';

/** The problem above the form: the fields' (each shown next to it), or the form's when a refused field has no words. */
export function problemOf(errors: FieldErrors, refused: Refusal[]): string {
  const worded = refused.every((r) => Object.keys(errors).some((id) => fieldOfError(id) === r.field));
  return worded && Object.keys(errors).length ? FIELDS_PROBLEM : FORM_NOT_VALID;
}

/** The form field an error id is about: "w2-from" is window_from's, "w0-days" window_day's; others are themselves. */
function fieldOfError(id: string): string {
  const row = /^w\d+-(days|from|to)$/.exec(id);
  if (!row) return id;
  return row[1] === 'days' ? 'window_day' : `window_${row[1]}`;
}
