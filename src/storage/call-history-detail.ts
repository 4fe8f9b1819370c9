// One call as the dashboard's detail shows it: its account, agent, events, deliveries and their attempts (Prisma
// Client), with its metadata as written and the runtime's result, which call-history-extras.ts reads on the pool.
import type { Call } from '../generated/prisma/client.js';
import type { CallStatus, DeliveryStatus, FailureReason } from '../../schemas/vocabulary.js';
import type { StoredResult } from './call-history-extras.js';
import { PrismaRepository } from './driver.js';

/** A call with everything its detail view shows; `metadata` is its JSON text as the client wrote it. */
export type CallDetail = Omit<Call, 'metadata'> & {
  metadata: string;
  /** The runtime's result as published (call_results.body: JSON text, its data's key order kept), or null. */
  result: StoredResult | null;
  account: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null };
  /** The client the call is listed for besides its account (an agency's key on that client's agent), else null. */
  listedFor: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null } | null;
  agent: { id: string; name: string };
  events: {
    id: string;
    fromStatus: CallStatus | null;
    toStatus: CallStatus;
    failureReason: FailureReason | null;
    source: string;
    occurredAt: Date;
  }[];
  deliveries: {
    id: string;
    callEventId: string;
    eventType: string;
    status: DeliveryStatus;
    /** Why it is held (status held), else null. */
    heldReason: string | null;
    attemptCount: number;
    nextAttemptAt: Date;
    createdAt: Date;
    endpointId: string;
    attempts: {
      id: string;
      attemptNumber: number;
      startedAt: Date;
      durationMs: number;
      responseStatus: number | null;
      error: string | null;
    }[];
  }[];
};

export class CallDetailReads extends PrismaRepository {
  /** One call with its account, agent, events (oldest first), deliveries and their attempts; null when none. */
  async findCallDetail(
    callId: string,
    metadataText: Promise<string | null>,
    resultText: Promise<StoredResult | null>,
  ): Promise<CallDetail | null> {
    const [call, text, result] = await Promise.all([
      this.prisma.call.findUnique({
        where: { id: callId },
        omit: { metadata: true },
        include: {
          account: { select: { id: true, name: true, kind: true, agencyId: true } },
          agent: { select: { id: true, name: true } },
          events: { orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] },
          deliveries: {
            orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
            select: {
              id: true,
              callEventId: true,
              eventType: true,
              status: true,
              heldReason: true,
              attemptCount: true,
              nextAttemptAt: true,
              createdAt: true,
              endpointId: true,
              attempts: {
                orderBy: { attemptNumber: 'asc' },
                select: {
                  id: true,
                  attemptNumber: true,
                  startedAt: true,
                  durationMs: true,
                  responseStatus: true,
                  error: true,
                },
              },
            },
          },
        },
      }),
      metadataText,
      resultText,
    ]);
    if (!call) return null;
    // Read only for a listed call (no relation: calls.listed_for_account_id has no foreign key, as agency_id).
    const listedFor = call.listedForAccountId
      ? await this.prisma.account.findUnique({
          where: { id: call.listedForAccountId },
          select: { id: true, name: true, kind: true, agencyId: true },
        })
      : null;
    return { ...call, listedFor, metadata: text ?? '{}', result };
  }
}
