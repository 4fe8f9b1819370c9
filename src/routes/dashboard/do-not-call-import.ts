// The do-not-call list's CSV import route: the one dashboard route that takes a multipart body. Nothing of the body is
// read before the session is checked (the signed-in family's hooks) and then its first part, the form's CSRF token,
// with @fastify/csrf-protection's own check; the file part is then streamed to the import's parser, never held whole.
// A body that is not readable multipart is a 400 page; a file past the limit a 413; an import that cannot begin now
// (another under way, too many) a 429 with Retry-After.
import type { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Value } from '@sinclair/typebox/value';
import { importDoNotCall } from '../../admin/do-not-call-import.js';
import { DASHBOARD_IMPORT_MAX_BYTES } from '../../domain/do-not-call.js';
import { ImportMode } from '../../../schemas/dashboard/do-not-call.js';
import type { ListPlace, PageInput } from '../../views/pages/do-not-call.js';

type Render = (request: FastifyRequest, reply: FastifyReply, status: number, input: PageInput) => Promise<FastifyReply>;

const MIB = `${DASHBOARD_IMPORT_MAX_BYTES / 1024 / 1024} MiB`;
const TOO_LARGE = `The file is larger than ${MIB}: split it into smaller files, or have an operator import it with callctl dnc import.`;
const NO_FILE = 'Choose a CSV file to import (its first line: phone_number,reason; or one number a line).';
const UNREADABLE = 'The upload could not be read as a form: choose the file again and send it once more.';

/** The form's CSRF token, checked by the plugin's own check (it answers the 403 itself when the token is wrong). */
function csrfPassed(fastify: FastifyInstance, request: FastifyRequest, reply: FastifyReply, token: string): boolean {
  // The plugin reads the token from the body (plugins/dashboard/index.ts, getToken): the parts read so far.
  (request as { body: unknown }).body = { _csrf: token };
  let passed = false;
  fastify.csrfProtection(request, reply, () => {
    passed = true;
  });
  return passed;
}

/** Reads the rest of a file part and throws it away (bounded: the upload stops one byte past the limit). */
async function drain(part: { file: Readable }): Promise<void> {
  for await (const chunk of bytesOf(part.file)) void chunk;
}

/** The upload broke off or was malformed while its file was read (not our fault: the request's). */
class UploadUnreadable extends Error {}

/** The file part's bytes, its stream's errors marked as the upload's. */
async function* bytesOf(file: Readable): AsyncGenerator<Uint8Array> {
  try {
    // Not destroyed when the reader stops early (a file past the limit): what is left is drained, then the answer sent.
    for await (const chunk of file.iterator({ destroyOnReturn: false })) yield chunk as Uint8Array;
  } catch (error) {
    throw new UploadUnreadable('the upload could not be read', { cause: error });
  }
}

export function importRoute(fastify: FastifyInstance, place: ListPlace, render: Render): void {
  fastify.post(
    `${place.prefix}/import`,
    { schema: { hide: true }, config: { role: 'member', multipart: true } },
    async (request, reply) => {
      const account = request.managed(place.managed);
      let mode: ImportMode = 'all';
      const refuse = (status: number, message: string) =>
        render(request, reply, status, {
          importMode: mode,
          importRefused: { kind: 'refused', problems: [{ line: 0, message }], badRows: 1 },
        });
      if (!request.isMultipart()) return refuse(415, NO_FILE);
      const parts = request.parts()[Symbol.asyncIterator]();
      let token: string | null = null;
      for (;;) {
        let next: IteratorResult<Multipart>;
        try {
          next = await parts.next();
        } catch (error) {
          request.log.info({ err: error }, 'do-not-call import: unreadable upload');
          return refuse(400, UNREADABLE);
        }
        if (next.done) break;
        const part = next.value;
        if (part.type === 'field') {
          // The token first, as our form sends it: no other part is looked at before it is checked.
          if (token === null && part.fieldname === '_csrf') token = String(part.value);
          else if (token === null) break;
          else if (part.fieldname === 'mode' && Value.Check(ImportMode, part.value)) mode = part.value;
          continue;
        }
        if (token === null) break;
        if (!csrfPassed(fastify, request, reply, token)) return reply;
        let outcome;
        try {
          outcome = await request.admin.run(importDoNotCall, {
            accountId: account.id,
            file: bytesOf(part.file),
            fileName: part.filename || null,
            actor: request.admin.actor,
            now: request.admin.now(),
            mode,
            maxBytes: DASHBOARD_IMPORT_MAX_BYTES,
          });
          await drain(part);
        } catch (error) {
          if (!(error instanceof UploadUnreadable)) throw error;
          request.log.info({ err: error.cause }, 'do-not-call import: upload broke off');
          return refuse(400, UNREADABLE);
        }
        if (part.file.truncated) return refuse(413, TOO_LARGE);
        if (!outcome.ok && 'busy' in outcome) {
          reply.header('retry-after', String(outcome.retryAfterSeconds));
          return refuse(429, outcome.busy);
        }
        // Refused for its rows: the form comes back offering to import the good ones.
        if (!outcome.ok)
          return render(request, reply, 400, {
            importMode: outcome.problems.some((p) => p.line > 0) ? 'good_rows' : mode,
            importRefused: { kind: 'refused', ...outcome },
          });
        if (outcome.badRows > 0)
          return render(request, reply, 200, { importMode: mode, importRefused: { kind: 'partly', ...outcome } });
        return reply.seeOther(place.base(account.id), { kind: 'ok', text: importedText(outcome) });
      }
      // No file, or a part before the token: the token is checked (a wrong or missing one gets every form's 403).
      if (!csrfPassed(fastify, request, reply, token ?? '')) return reply;
      return refuse(400, NO_FILE);
    },
  );
}

export function importedText(outcome: {
  added: number;
  alreadyListed: number;
  duplicatesInFile: number;
  waitingCallsEnded: number;
}): string {
  const skipped = [
    outcome.alreadyListed > 0 ? `${outcome.alreadyListed} already on the list` : null,
    outcome.duplicatesInFile > 0 ? `${outcome.duplicatesInFile} repeated in the file` : null,
  ].filter(Boolean);
  const ended =
    outcome.waitingCallsEnded > 0
      ? `; ${outcome.waitingCallsEnded} waiting ${outcome.waitingCallsEnded === 1 ? 'call' : 'calls'} to them ended failed (do-not-call)`
      : '';
  return `Imported: ${outcome.added} ${outcome.added === 1 ? 'number' : 'numbers'} added${skipped.length ? `; skipped ${skipped.join(' and ')}` : ''}${ended}.`;
}
