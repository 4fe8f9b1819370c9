// Calling-rules settings written straight to accounts.calling_rules (issue 48): the settings pages and their admin
// function are built beside the trigger's checks, which need only the stored JSON, including values no form writes
// (a client's own hours as stored, an unreadable value that must read as on and strict).
import { Prisma, type PrismaClient } from '../../../src/generated/prisma/client.js';
import { DEFAULT_AGENCY_CALLING_RULES, type AgencyCallingRulesData } from '../../../schemas/compliance.js';

/** An agency's settings: `rules` over the defaults, switched on unless `rules` says otherwise; null: none (off). */
export async function storeAgencyCallingRules(
  prisma: PrismaClient,
  agencyId: string,
  rules: Partial<AgencyCallingRulesData> | null,
): Promise<void> {
  const stored = rules === null ? null : { ...DEFAULT_AGENCY_CALLING_RULES, enabled: true, ...rules };
  await storeCallingRulesAsIs(prisma, agencyId, stored);
}

/** An account's calling_rules exactly as given (a client's own hours, or a value no form writes); null: none. */
export async function storeCallingRulesAsIs(prisma: PrismaClient, accountId: string, value: unknown): Promise<void> {
  await prisma.account.update({
    where: { id: accountId },
    data: { callingRules: value === null ? Prisma.DbNull : (value as Prisma.InputJsonValue) },
  });
}
