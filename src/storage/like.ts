// Text for Prisma's case-insensitive filters. Prisma writes `contains`, `startsWith` and an `equals` with
// `mode: 'insensitive'` as ILIKE patterns with the value as it is, so % and _ in what a person typed would match
// anything: these escape them to stand for themselves.

/** `text` for a `contains`, `startsWith` or insensitive `equals`: %, _ and \ stand for themselves. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** Prisma's condition for text that starts with `text` in any case, every character of it as itself. */
export function startsWithInAnyCase(text: string): { startsWith: string; mode: 'insensitive' } {
  return { startsWith: likeLiteral(text), mode: 'insensitive' };
}
