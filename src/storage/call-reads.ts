// The calls as callbacks and operators read and record them (Prisma Client): a call, an account's newest, one with
// its events and deliveries, the provider's id and the answering machine's verdict. The metadata's text is read in SQL
// on the same client (Prisma would parse it and reorder its keys). The calls' pool repository (calls.ts) extends it.
import { ACTIVE_STATUSES, type AnsweredBy, type CallStatus } from '../../schemas/vocabulary.js';
import type { Call, Prisma } from '../generated/prisma/client.js';
import type { Db } from './db-types.js';
import { PrismaRepository } from './driver.js';
import { statement } from './statements.js';

/** A call as read for people: `metadata` is its JSON text as the client wrote it. */
export type CallWithMetadataText = Omit<Call, 'metadata'> & { metadata: string };

// Hand-written: the metadata's text as stored (`json` keeps the client's key order); Prisma Client parses it into an
// object, which moves integer-like keys ("2", "10") first. Run on the repository's client (an operator's read).
const METADATA_TEXTS = statement(
  'oct_call_metadata_texts',
  'SELECT id, metadata::text AS metadata FROM calls WHERE id = ANY($1::uuid[])',
);

async function withMetadataTexts<C extends { id: string }>(
  prisma: Db,
  calls: C[],
): Promise<(C & { metadata: string })[]> {
  if (calls.length === 0) return [];
  const rows = await prisma.$queryRawUnsafe<{ id: string; metadata: string }[]>(
    METADATA_TEXTS.text,
    calls.map((c) => c.id),
  );
  const texts = new Map(rows.map((r) => [r.id, r.metadata]));
  return calls.map((call) => ({ ...call, metadata: texts.get(call.id) ?? '{}' }));
}

/** The calls' reads and records for callbacks and operators. */
export class CallReads extends PrismaRepository {
  /**
   * The account's most recent calls (of one status, when given), newest first: its own and those listed for it (an
   * agency's key on its agents). Each read on its own index, newest first, then merged: as one `OR`, PostgreSQL would
   * read and sort every call of the account.
   */
  async listCallsOfAccount(query: {
    accountId: string;
    status: CallStatus | null;
    limit: number;
  }): Promise<CallWithMetadataText[]> {
    const status = query.status ? { status: query.status } : {};
    const newest = (where: Prisma.CallWhereInput) =>
      this.prisma.call.findMany({
        where: { ...where, ...status },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: query.limit,
        omit: { metadata: true },
      });
    const [own, listed] = await Promise.all([
      newest({ accountId: query.accountId }),
      newest({ listedForAccountId: query.accountId }),
    ]);
    const calls = [...own, ...listed]
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .slice(0, query.limit);
    return withMetadataTexts(this.prisma, calls);
  }

  /** One call with its events and its webhook deliveries (each with its attempts), in order; null when none. */
  async findCallWithHistory(callId: string) {
    const call = await this.prisma.call.findUnique({
      where: { id: callId },
      omit: { metadata: true },
      include: {
        events: { orderBy: { occurredAt: 'asc' } },
        deliveries: { orderBy: { createdAt: 'asc' }, include: { attempts: { orderBy: { attemptNumber: 'asc' } } } },
      },
    });
    return call && (await withMetadataTexts(this.prisma, [call]))[0]!;
  }

  async findCallById(callId: string): Promise<Call | null> {
    return this.prisma.call.findUnique({ where: { id: callId } });
  }

  /** Records the provider's id for a call that has none yet (a callback that beat the dialer's own write). */
  async recordProviderCallId(callId: string, providerCallId: string): Promise<void> {
    await this.prisma.call.updateMany({ where: { id: callId, providerCallId: null }, data: { providerCallId } });
  }

  /**
   * Records answering-machine detection's verdict on a call still dialling or connected (no status changes: the
   * call goes on until it ends), and whether a message is being left; false when the call is no longer live.
   */
  async recordAnsweredBy(
    callId: string,
    attempt: number,
    verdict: { answeredBy: AnsweredBy; voicemailLeft: boolean | null },
  ): Promise<boolean> {
    // Only on the attempt the verdict is about: a call retried meanwhile is another attempt's business.
    const { count } = await this.prisma.call.updateMany({
      where: { id: callId, attempt, status: { in: [...ACTIVE_STATUSES] } },
      data: verdict,
    });
    return count === 1;
  }
}
