// Hand-written SQL statements, named (prepared once per connection) and registered, so that one test can prepare
// every one of them against the migrated schema: a renamed or dropped column fails the suite, not production.
export interface Statement {
  /**
   * The prepared statement's name: unique, and never reused for another text. Undefined (an unnamed statement, parsed
   * each time) when the process talks to PostgreSQL through a transaction-pooling proxy: a statement prepared on one
   * server connection would be missing on the next.
   */
  readonly name: string | undefined;
  readonly text: string;
}

const registry = new Map<string, string>();
let named = true;

/** Named (prepared) statements on or off for the whole process; off behind a transaction pooler. */
export function useNamedStatements(on: boolean): void {
  named = on;
}

export function namedStatementsInUse(): boolean {
  return named;
}

/**
 * Declares a statement at module load. Spread it into a query config: `pool.query({ ...STATEMENT, values })`.
 * `planEachTime`: never prepared (sent unnamed, so PostgreSQL plans it with the values of each execution). For a
 * statement whose best plan depends on how many rows its values select, where a cached generic plan can be orders
 * of magnitude slower than a plan made for the values at hand; worth it only off the request path.
 */
export function statement(name: string, text: string, options: { planEachTime?: boolean } = {}): Statement {
  const existing = registry.get(name);
  if (existing !== undefined && existing !== text)
    throw new Error(`statement ${name} declared twice with different texts`);
  registry.set(name, text);
  // A getter: spread into a query config, it gives its value at that moment.
  return {
    text,
    get name() {
      return named && !options.planEachTime ? name : undefined;
    },
  };
}

/** Every statement declared by the modules loaded so far. */
export function declaredStatements(): { name: string; text: string }[] {
  return [...registry].map(([name, text]) => ({ name, text }));
}
