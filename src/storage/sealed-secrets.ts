// Every column of sealed values at once (secrets.ts, SEALED_COLUMNS): the key ids the stored values are sealed with (the
// start's refusal check), sealing the values an earlier release stored in clear (the upgrade), and re-wrapping values
// sealed under an earlier key (callctl secrets rotate). Each write is a compare-and-set on the value read, so a
// replica doing the same at once, or a writer changing the secret meanwhile, is never overwritten. Hand-written on the
// pool: statements over whichever table holds a secret, by keyset in batches.
import { SqlRepository } from './driver.js';
import { SEALED_COLUMNS, SEALED_PREFIX, type SealedColumn } from './secrets.js';
import { statement, type Statement } from './statements.js';

const FIRST_KEY = { uuid: '00000000-0000-0000-0000-000000000000', text: '' } as const;

interface ColumnStatements {
  column: SealedColumn;
  keyIds: Statement;
  clear: Statement;
  sealedElsewhere: Statement;
  swap: Statement;
}

// $1: the last key of the previous batch; $2: the batch's size. The prefix is a constant of ours, never input.
const STATEMENTS: ColumnStatements[] = SEALED_COLUMNS.map((column) => {
  const { table, key, keyType, value, owner } = column;
  const name = `oct_sealed_${table}`;
  return {
    column,
    keyIds: statement(
      `${name}_key_ids`,
      `SELECT split_part(${value}, '.', 3) AS "keyId", count(*)::int AS count FROM ${table}
        WHERE ${value} LIKE '${SEALED_PREFIX}%' GROUP BY 1`,
    ),
    clear: statement(
      `${name}_clear`,
      `SELECT ${key}::text AS key, ${owner}::text AS owner, ${value} AS value FROM ${table}
        WHERE ${key} > $1::${keyType} AND ${value} NOT LIKE '${SEALED_PREFIX}%' ORDER BY ${key} LIMIT $2`,
    ),
    // $3: the current key's id: values wrapped under it are left alone.
    sealedElsewhere: statement(
      `${name}_sealed_elsewhere`,
      `SELECT ${key}::text AS key, ${owner}::text AS owner, ${value} AS value FROM ${table}
        WHERE ${key} > $1::${keyType} AND ${value} LIKE '${SEALED_PREFIX}%' AND split_part(${value}, '.', 3) <> $3::text
        ORDER BY ${key} LIMIT $2`,
    ),
    swap: statement(
      `${name}_swap`,
      `UPDATE ${table} t SET ${value} = u.new FROM unnest($1::${keyType}[], $2::text[], $3::text[]) AS u(key, old, new)
        WHERE t.${key} = u.key AND t.${value} = u.old`,
    ),
  };
});

interface Row {
  key: string;
  owner: string;
  value: string;
}

export class SealedSecretRepository extends SqlRepository {
  /** How many stored values each key id seals, over every sealed column. */
  async keyIdsInUse(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const { keyIds } of STATEMENTS) {
      const { rows } = await this.pool.query<{ keyId: string; count: number }>({ ...keyIds, values: [] });
      for (const row of rows) counts.set(row.keyId, (counts.get(row.keyId) ?? 0) + row.count);
    }
    return counts;
  }

  /** Seals every value stored in clear (an earlier release's) with the current key; returns how many it sealed. */
  async sealClear(batchSize = 500): Promise<number> {
    return this.swapAll('clear', batchSize, (value, place) => this.secrets.seal(value, place));
  }

  /**
   * Re-wraps every value sealed under another key than the current one; returns how many it re-wrapped. A value whose
   * key this process lacks, or that does not open, throws (SecretOpenError) and stops the rotation: run it where every
   * key is configured.
   */
  async rewrapAll(batchSize = 500): Promise<number> {
    return this.swapAll('sealedElsewhere', batchSize, (value, place) => this.secrets.codec.rewrap(value, place));
  }

  private async swapAll(
    which: 'clear' | 'sealedElsewhere',
    batchSize: number,
    change: (value: string, place: string) => string | null,
  ): Promise<number> {
    let changed = 0;
    const currentKeyId = which === 'sealedElsewhere' ? this.secrets.codec.currentKeyId : null;
    for (const statements of STATEMENTS) {
      const { column, swap } = statements;
      let after: string = FIRST_KEY[column.keyType];
      for (;;) {
        const values: unknown[] = currentKeyId === null ? [after, batchSize] : [after, batchSize, currentKeyId];
        const { rows } = await this.pool.query<Row>({ ...statements[which], values });
        if (rows.length === 0) break;
        after = rows.at(-1)!.key;
        const swaps = rows.flatMap((row) => {
          const next = change(row.value, column.place(row.owner));
          return next === null ? [] : [{ key: row.key, old: row.value, next }];
        });
        if (swaps.length > 0) {
          const { rowCount } = await this.pool.query({
            ...swap,
            values: [swaps.map((s) => s.key), swaps.map((s) => s.old), swaps.map((s) => s.next)],
          });
          changed += rowCount ?? 0;
        }
        if (rows.length < batchSize) break;
      }
    }
    return changed;
  }
}
