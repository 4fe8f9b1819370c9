// The account_carriers table: an account's own carrier, its credentials sealed as they are written and opened as they
// are read (secrets.ts), and the agency's switch that lets its clients choose one. Which carrier a call uses (the
// account's, its agency's or the environment's) is decided by the caller. Prisma Client.
import { Prisma } from '../generated/prisma/client.js';
import { CARRIER_PROVIDERS, type CarrierCredentials, type CarrierProvider } from '../../schemas/carrier.js';
import { PrismaRepository } from './driver.js';
import { SECRET_PLACES } from './secrets.js';

/** An account's carrier as shown: no secret in it. */
export interface CarrierSummary {
  accountId: string;
  provider: CarrierProvider;
  /** The credentials that are not secret (account SID, connection id, space URL, project id). */
  shown: Record<string, string>;
  /** The carrier's numbers for the account when they were checked; null when it does not list them. */
  numbers: string[] | null;
  checkedAt: Date;
  updatedAt: Date;
}

const isProvider = (value: string): value is CarrierProvider =>
  (CARRIER_PROVIDERS as readonly string[]).includes(value);

type Row = Prisma.AccountCarrierGetPayload<object>;

function summaryOf(row: Row): CarrierSummary {
  if (!isProvider(row.provider)) throw new Error(`account_carriers: unknown provider ${row.provider}`);
  return {
    accountId: row.accountId,
    provider: row.provider,
    shown: row.shown as Record<string, string>,
    numbers: Array.isArray(row.numbers) ? (row.numbers as string[]) : null,
    checkedAt: row.checkedAt,
    updatedAt: row.updatedAt,
  };
}

export class CarrierRepository extends PrismaRepository {
  /** The account's own carrier without its secrets, or null (it uses its agency's or the environment's). */
  async findCarrierSummary(accountId: string): Promise<CarrierSummary | null> {
    const row = await this.prisma.accountCarrier.findUnique({ where: { accountId } });
    return row && summaryOf(row);
  }

  /** The account's own carrier with its credentials in clear, for dialing and for checking callbacks' signatures. */
  async findCarrier(accountId: string): Promise<(CarrierSummary & { carrier: CarrierCredentials }) | null> {
    const row = await this.prisma.accountCarrier.findUnique({ where: { accountId } });
    if (!row) return null;
    const summary = summaryOf(row);
    const credentials = JSON.parse(
      this.secrets.open(row.credentials, SECRET_PLACES.carrierCredentials(accountId)),
    ) as CarrierCredentials['credentials'];
    return { ...summary, carrier: { provider: summary.provider, credentials } as CarrierCredentials };
  }

  /** Sets (or replaces) the account's carrier; the credentials sealed for this account. */
  async saveCarrier(
    accountId: string,
    carrier: CarrierCredentials,
    input: { shown: Record<string, string>; numbers: string[] | null; now: Date },
  ): Promise<void> {
    const data = {
      provider: carrier.provider,
      credentials: this.secrets.seal(JSON.stringify(carrier.credentials), SECRET_PLACES.carrierCredentials(accountId)),
      shown: input.shown,
      numbers: input.numbers ?? Prisma.DbNull,
      checkedAt: input.now,
      updatedAt: input.now,
    };
    await this.prisma.accountCarrier.upsert({ where: { accountId }, create: { accountId, ...data }, update: data });
  }

  /**
   * Calls dialled through the account's own carrier that have not ended (dialing, in progress): their callbacks are
   * checked with its credentials, so it may not be removed or moved to another provider while there are any.
   * `calls_active_by_account` holds every such call.
   */
  async countLiveCalls(accountId: string): Promise<number> {
    return this.prisma.call.count({
      where: { carrierAccountId: accountId, status: { in: ['dialing', 'in_progress'] } },
    });
  }

  /** Removes the account's own carrier (it then uses its agency's or the environment's); whether it had one. */
  async removeCarrier(accountId: string): Promise<boolean> {
    const { count } = await this.prisma.accountCarrier.deleteMany({ where: { accountId } });
    return count === 1;
  }

  async setClientsChooseCarrier(agencyId: string, allowed: boolean): Promise<void> {
    await this.prisma.account.update({ where: { id: agencyId }, data: { clientsChooseCarrier: allowed } });
  }
}
