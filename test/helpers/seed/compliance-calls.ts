// Calls with the calling rules' columns set (recipient_region, consent, compliance, held_by), written straight to
// the database: the dispatcher writes the decision records and the hold, and a test of how they are shown or exported
// starts from those states rather than from a dispatcher run at the right wall-clock hour.
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';
import type { ComplianceRecordData, ConsentData } from '../../../schemas/compliance.js';

export interface ComplianceCall {
  accountId: string;
  agentId: string;
  createdAt: Date;
  status?: 'initiated' | 'completed' | 'failed';
  phoneNumber?: string;
  name?: string | null;
  recipientRegion?: string | null;
  /** The consent as stored: the trigger's validated record, or anything (a row edited by hand). */
  consent?: ConsentData | Prisma.InputJsonValue | null;
  compliance?: ComplianceRecordData[] | Prisma.InputJsonValue | null;
  heldBy?: 'calling_rules' | 'cap' | null;
  /** The moment it may next be dialled (a held call's); default createdAt. */
  notBefore?: Date;
  timezone?: string | null;
  listedForAccountId?: string | null;
}

/** A decision record with the usual fields, `over` replacing any. */
export function decisionRecord(over: Partial<ComplianceRecordData> = {}): ComplianceRecordData {
  return {
    attempt: 1,
    checked_at: '2055-03-14T11:42:00.000Z',
    verdict: 'held',
    reasons: ['US-FL: 8:00–20:00, 07:42 now in America/New_York'],
    rules_version: '2055.1',
    candidates: [
      {
        region: 'US-FL',
        timezone: 'America/New_York',
        local_time: '2055-03-14 07:42',
        allowed: false,
        rule: 'US-FL hours',
      },
      { region: 'US-FL', timezone: 'America/Chicago', local_time: '2055-03-14 06:42', allowed: false, rule: null },
    ],
    cap: { count: 1, limit: 3, window: '24h', scope: 'agency' },
    do_not_call: 'clear',
    consent: 'on_record',
    ...over,
  };
}

/** One call with its acceptance event and the calling rules' columns as given; returns its id. */
export async function insertComplianceCall(prisma: PrismaClient, call: ComplianceCall): Promise<string> {
  const json = (v: unknown) => (v === null || v === undefined ? undefined : (v as Prisma.InputJsonValue));
  const status = call.status ?? 'completed';
  const row = await prisma.call.create({
    data: {
      accountId: call.accountId,
      agentId: call.agentId,
      phoneNumber: call.phoneNumber ?? '+13055550123',
      fromNumber: '+14155550100',
      name: call.name ?? null,
      status,
      notBefore: call.notBefore ?? call.createdAt,
      expiresAt: new Date(call.createdAt.getTime() + 3 * 86_400_000),
      createdAt: call.createdAt,
      timezone: call.timezone ?? null,
      recipientRegion: call.recipientRegion ?? null,
      consent: json(call.consent),
      compliance: json(call.compliance),
      heldBy: call.heldBy ?? null,
      listedForAccountId: call.listedForAccountId ?? null,
      events: { create: { toStatus: 'initiated', source: 'api', occurredAt: call.createdAt } },
    },
  });
  return row.id;
}
