// A dashboard user's email address, written once for src/domain/user-email.ts (callctl and the dashboard check it) and
// the dashboard's invite form (whose schema states it): its shape, and the words for an address without it.
/** One @, something on each side, a dot in the domain, no blanks: a typo filter, not a validator (unanchored). */
export const USER_EMAIL_SHAPE = '[^\\s@]+@[^\\s@]+\\.[^\\s@]+';

/** What a person is told when `typed` (as typed) is not an address of that shape. */
export const notAnEmailAddress = (typed: string) => `"${typed}" is not an email address`;
