// The do-not-call list's CSV import, for callctl and the dashboard alike, read as a stream: rows are staged as the file
// is read (a short write per thousand rows, the event loop given a turn every few milliseconds), then moved to the
// list in bounded batches, each batch's newly listed numbers ending their waiting calls; what the process keeps does
// not grow with the file. Every row or none (the default), or the good rows with the bad ones listed. One import at a
// time per account (across replicas), a few an hour, a few at once per process; a refused import is audited.
import { randomUUID } from 'node:crypto';
import { readImport, Slicer, type ImportProblem } from '../domain/do-not-call-csv.js';
import type { Storage } from '../storage/index.js';
import { audit, type Actor } from './audit.js';
import { findAccount } from './reach.js';
import { accountCountry } from './account-country.js';
import { addedByOf, endWaitingCalls } from './do-not-call.js';

/** `all`: a file with a bad row imports nothing. `good_rows`: the good rows are imported, the bad ones listed. */
export type ImportMode = 'all' | 'good_rows';
export const IMPORT_MODES = ['all', 'good_rows'] as const satisfies readonly ImportMode[];

/** Imports an account may begin in an hour. */
export const IMPORTS_PER_HOUR = 20;
/** Imports one process runs at once (of any accounts): each holds a file's reading and a connection at a time. */
export const IMPORTS_AT_ONCE = 2;
/** A heartbeat older than this is an import whose process died: the next import of the account takes over. */
const STALE_MS = 2 * 60_000;
/** Problems an import reports (the first ones, by line); the rest are counted. */
export const PROBLEMS_KEPT = 100;
/** Staged rows moved (and cleared) per statement. */
const MOVE_BATCH = 1_000;

let running = 0;

export type ImportOutcome =
  | {
      ok: true;
      rows: number;
      added: number;
      alreadyListed: number;
      duplicatesInFile: number;
      /** Bad rows left out (mode good_rows), the first PROBLEMS_KEPT of them in `problems`. */
      badRows: number;
      problems: ImportProblem[];
      waitingCallsEnded: number;
    }
  /** Refused for its content: nothing imported; the first problems and how many in all. */
  | { ok: false; problems: ImportProblem[]; badRows: number }
  /** Not begun: another import of the list is under way, or too many; `retryAfterSeconds` says when to try again. */
  | { ok: false; busy: string; retryAfterSeconds: number };

export interface ImportInput {
  accountId: string;
  /** The file's bytes, whole or as they arrive (an upload's stream, a file read in pieces). */
  file: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  fileName?: string | null;
  actor: Actor;
  now: Date;
  mode?: ImportMode;
  /** The largest file read; the rest is refused as a whole. */
  maxBytes: number;
}

/** Refuses an import that cannot begin, audited (who tried, and why). */
async function refuse(storage: Storage, input: ImportInput, busy: string, retryAfterSeconds: number) {
  await audit(storage, input.accountId, input.actor, 'do_not_call_import_refused', input.now, {
    ...(input.fileName ? { file: input.fileName } : {}),
    why: busy,
  });
  return { ok: false as const, busy, retryAfterSeconds };
}

/**
 * Imports a CSV file (src/domain/do-not-call-csv.ts says its form) into the list of an account the actor reaches
 * (another is an AdminError, as a missing one). Numbers already on the list, and a number repeated in the file, are
 * skipped (counted). One audit entry with the counts; each entry carries who added it and when.
 */
export async function importDoNotCall(storage: Storage, input: ImportInput): Promise<ImportOutcome> {
  const account = await findAccount(storage, input.accountId, input.actor);
  if (running >= IMPORTS_AT_ONCE)
    return refuse(storage, input, 'Other imports are under way: try again in a minute.', 60);
  running++;
  try {
    const importId = randomUUID();
    const { now } = input;
    const slot = await storage.doNotCall.imports.start(account.id, importId, {
      now,
      staleBefore: new Date(now.getTime() - STALE_MS),
      hourAgo: new Date(now.getTime() - 3_600_000),
      perHour: IMPORTS_PER_HOUR,
    });
    if (slot.kind === 'running')
      return await refuse(storage, input, 'Another import of this list is under way: try again when it is done.', 60);
    if (slot.kind === 'too_many') {
      const seconds = Math.max(1, Math.ceil((slot.until.getTime() - now.getTime()) / 1000));
      return await refuse(storage, input, `This list has had ${IMPORTS_PER_HOUR} imports in the last hour.`, seconds);
    }
    // Rows a process that died mid-import left behind (its slot has just been taken over).
    await storage.doNotCall.imports.clearStaged(account.id, MOVE_BATCH);
    let lost = false;
    try {
      return await runImport(
        storage,
        { ...input, accountId: account.id },
        importId,
        await accountCountry(storage, account),
      );
    } catch (error) {
      lost = error instanceof SlotLost;
      throw error;
    } finally {
      // A slot another import took over is its now, staged rows included.
      if (!lost && (await storage.doNotCall.imports.heartbeat(account.id, importId, now))) {
        await storage.doNotCall.imports.clearStaged(account.id, MOVE_BATCH);
        await storage.doNotCall.imports.finish(account.id, importId);
      }
    }
  } finally {
    running--;
  }
}

/** Thrown when another import took the slot over (this one's heartbeat was missed for STALE_MS). */
class SlotLost extends Error {
  constructor() {
    super('the do-not-call import lost its slot to another import of the list');
  }
}

async function runImport(storage: Storage, input: ImportInput, importId: string, country: string) {
  const { imports } = storage.doNotCall;
  // Heartbeats go on from the import's `now` as time passes: an import outlasting STALE_MS keeps its slot.
  const started = performance.now();
  const clock = () => new Date(input.now.getTime() + Math.round(performance.now() - started));
  const mode = input.mode ?? 'all';
  const problems: ImportProblem[] = [];
  let badRows = 0;
  let fatal = false;
  let read = 0;
  let staged = 0;
  for await (const batch of readImport(toChunks(input.file), { country, maxBytes: input.maxBytes })) {
    badRows += batch.problems.length;
    for (const problem of batch.problems) if (problems.length < PROBLEMS_KEPT) problems.push(problem);
    if (batch.fatal) fatal = true;
    // Every batch, read only for its problems or not: the slot stays this import's however long the file takes.
    if (!(await imports.heartbeat(input.accountId, importId, clock()))) throw new SlotLost();
    // All or nothing: once a row is bad nothing will be written, so the rest is only read for its problems.
    if (mode === 'all' && badRows > 0) continue;
    read += batch.rows.length;
    staged += await imports.stage(input.accountId, batch.rows);
  }
  if (fatal || (mode === 'all' && badRows > 0)) return { ok: false as const, problems, badRows };

  const addedBy = await addedByOf(storage, input.actor);
  const slicer = new Slicer();
  let added = 0;
  let ended = 0;
  for (;;) {
    if (!(await imports.heartbeat(input.accountId, importId, clock()))) throw new SlotLost();
    const moved = await imports.move(input.accountId, MOVE_BATCH, { addedBy, addedAt: input.now });
    added += moved.added.length;
    ended += await endWaitingCalls(storage, {
      accountId: input.accountId,
      numbers: moved.added,
      actor: input.actor,
      now: input.now,
    });
    if (moved.rows < MOVE_BATCH) break;
    await slicer.turn();
  }
  const outcome = {
    rows: read,
    added,
    alreadyListed: staged - added,
    duplicatesInFile: read - staged,
  };
  await audit(storage, input.accountId, input.actor, 'do_not_call_imported', input.now, {
    ...(input.fileName ? { file: input.fileName } : {}),
    rows: outcome.rows + badRows,
    added: outcome.added,
    already_listed: outcome.alreadyListed,
    duplicates_in_file: outcome.duplicatesInFile,
    ...(badRows > 0 ? { bad_rows_left_out: badRows } : {}),
    ...(ended > 0 ? { waiting_calls_ended: ended } : {}),
  });
  return { ok: true as const, ...outcome, badRows, problems, waitingCallsEnded: ended };
}

/** The file as chunks: a whole file in one piece (the reader cuts it smaller), or as it arrives. */
function toChunks(file: ImportInput['file']): AsyncIterable<Uint8Array> | Iterable<Uint8Array> {
  return file instanceof Uint8Array ? [file] : file;
}

/** The problems of a refused import in a few lines: the first `shown`, then how many more. */
export function describeProblems(problems: ImportProblem[], badRows: number, shown = 20): string[] {
  const lines = problems.slice(0, shown).map((p) => (p.line > 0 ? `line ${p.line}: ${p.message}` : p.message));
  if (badRows > Math.min(shown, problems.length))
    lines.push(`... and ${badRows - Math.min(shown, problems.length)} more`);
  return lines;
}
