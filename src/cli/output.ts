// callctl output for people (without --json): aligned `key: value` lines and small tables for lists.

// A call has a dozen fields; a list of them only stays readable with the few that tell calls apart.
const TABLE_COLUMNS: Record<string, string[]> = {
  calls: ['call_id', 'status', 'phone_number', 'agent_id', 'created_at', 'failure_reason', 'triggered_by'],
};

export const label = (key: string) => key.replace(/_/g, ' ');

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isRows = (value: unknown): value is Record<string, unknown>[] =>
  Array.isArray(value) && value.length > 0 && value.every(isRecord);

/** A value in a line or table cell; `-` is nothing (null, absent or empty). */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  // Nested lists inside a table row (a delivery's attempts) are summarised by their count.
  if (Array.isArray(value))
    return value.every((v) => !isRecord(v)) ? value.map(cell).join(', ') || '-' : String(value.length);
  if (isRecord(value))
    return (
      Object.entries(value)
        .map(([k, v]) => `${k}=${cell(v)}`)
        .join(' ') || '-'
    );
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are records or arrays, handled above
  return String(value);
}

export function table(rows: Record<string, unknown>[], columns: string[] | undefined, indent: string): string[] {
  const names = columns ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => names.map((name) => cell(row[name])));
  const widths = names.map((name, i) => Math.max(label(name).length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: string[]) => (indent + values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ')).trimEnd();
  return [line(names.map(label)), ...cells.map(line)];
}

export function block(value: Record<string, unknown>, indent: string): string[] {
  const entries = Object.entries(value);
  const width = Math.max(0, ...entries.map(([key]) => label(key).length + 1));
  const lines: string[] = [];
  for (const [key, item] of entries) {
    const head = `${indent}${`${label(key)}:`.padEnd(width)}`;
    if (isRows(item)) lines.push(`${indent}${label(key)}:`, ...table(item, TABLE_COLUMNS[key], `${indent}  `));
    else if (isRecord(item) && Object.keys(item).length > 0)
      lines.push(`${indent}${label(key)}:`, ...block(item, `${indent}  `));
    else if (Array.isArray(item) && item.length === 0) lines.push(`${head} (none)`);
    else if (isRecord(item)) lines.push(`${head} (none)`);
    else lines.push(`${head} ${cell(item)}`);
  }
  return lines;
}

/** The result of a command for a person; `notice` follows it on its own line. */
export function formatHuman(result: Record<string, unknown>, notice?: string): string {
  const lines = block(result, '');
  if (notice) lines.push('', notice);
  return `${lines.join('\n')}\n`;
}
