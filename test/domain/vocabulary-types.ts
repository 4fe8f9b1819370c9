// Compile-time check (npm run typecheck): the call vocabulary stays literal through its TypeBox schema.
import type { Static } from '@sinclair/typebox';
import { CallStatusSchema } from '../../schemas/call.js';
// @ts-expect-error 'not-a-status' must not type-check
const bad: Static<typeof CallStatusSchema> = 'not-a-status';
const good: Static<typeof CallStatusSchema> = 'dialing';
export { bad, good };
