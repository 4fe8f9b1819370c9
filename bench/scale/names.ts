// The names the scale bench's calls carry, and the prefix its name search asks for. A first and a last name, each
// picked with a Zipf-like share (names are: a few are common, most are rare) from a hash of the call's number, so
// that a name says nothing of when the call was made, as with the people a CRM calls. ("Lead <n>", the names before,
// put every match of a prefix such as "lead 1" in one block of time: a bench artefact, not a deployment's data.)

/** Common US first names, the most common first; none is a prefix of another. */
// prettier-ignore
const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William',
  'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen', 'Christopher', 'Lisa',
  'Daniel', 'Nancy', 'Matthew', 'Betty', 'Anthony', 'Margaret', 'Mark', 'Sandra', 'Donald', 'Ashley', 'Steven',
  'Kimberly', 'Paul', 'Emily', 'Andrew', 'Donna', 'Joshua', 'Michelle', 'Kenneth', 'Carol', 'Kevin', 'Amanda', 'Brian',
  'Dorothy', 'George', 'Melissa',
] as const;

/** Common US surnames, the most common first. */
// prettier-ignore
const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez',
  'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez',
  'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson', 'Walker', 'Young', 'Allen', 'King',
  'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores', 'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera',
  'Campbell', 'Mitchell', 'Carter', 'Roberts',
] as const;

/**
 * One of `names`, picked by floor(count^u) with u uniform in [0, 1) from a hash of `k` and `salt`: the i-th is picked
 * with a share of log((i + 1) / i) / log(count) (the first of 48 about 18%, the 17th 1.5%, the last 0.5%).
 */
function pick(names: readonly string[], k: string, salt: string): string {
  const u = `(hashtext(${k}::text || '${salt}') & 2147483647)::float8 / 2147483648.0`;
  const i = `least(${names.length}, greatest(1, floor(power(${names.length}::float8, ${u}))::int))`;
  return `(ARRAY[${names.map((n) => `'${n}'`).join(', ')}])[${i}]`;
}

/** SQL: the name of the call numbered `k` (an SQL expression), "First Last". */
export function personNameSql(k: string): string {
  return `${pick(FIRST_NAMES, k, 'first')} || ' ' || ${pick(LAST_NAMES, k, 'last')}`;
}

/**
 * The dashboard's name search: the 17th first name, about 1.5% of the calls, spread over the whole history. Chosen
 * (fourteenth session) as the search the list served slowest: commoner ones are found among the newest calls at once
 * (src/storage/call-history.ts, SEARCH_PROBE_ROWS), and this share lies just below where the list stops asking the
 * name index, which then read every match; since the fifteenth session it merges the newest of each name instead.
 */
export const NAME_SEARCH = { prefix: FIRST_NAMES[16].toLowerCase(), share: Math.log(18 / 17) / Math.log(48) };

/**
 * Every name the search finds, "Thomas Smith" to "Thomas Roberts": each account of the base's dashboard agency has a
 * finished call with each on every database (data-tenants.ts, insertSearchedNames), so that the empty database's
 * search lists the names a large history has and renders a full page, as the history's does: the ratio compares the
 * same page, read from indexes of different sizes.
 */
export const SEARCHED_NAMES: readonly string[] = LAST_NAMES.map((last) => `${FIRST_NAMES[16]} ${last}`);
