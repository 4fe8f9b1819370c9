// The one_time_tokens table: set-password, invitation and password-reset links, by digest; single use, until they expire.
// Prisma Client, and the agency's links lock (an advisory lock) in SQL on the same client.
import type { TokenPurpose } from '../generated/prisma/enums.js';
import { PrismaRepository } from './driver.js';

/** The first key of the per-agency lock that serialises counting and making links (two-key form, like call-claims'). */
const LINKS_LOCK_SPACE = 72707371;

export class TokenRepository extends PrismaRepository {
  async insertToken(input: {
    userId: string;
    digest: Buffer;
    purpose: TokenPurpose;
    createdById: string | null;
    createdAt: Date;
    expiresAt: Date;
  }): Promise<void> {
    await this.prisma.oneTimeToken.create({ data: { ...input, digest: new Uint8Array(input.digest) } });
  }

  /** The link's user when the token is unused and unexpired (the set-password page, before the form is sent). */
  async findUsableToken(digest: Buffer, now: Date) {
    return this.prisma.oneTimeToken.findFirst({
      where: { digest: new Uint8Array(digest), usedAt: null, expiresAt: { gt: now } },
      select: { userId: true, purpose: true, user: { select: { email: true, disabledAt: true } } },
    });
  }

  /**
   * Uses the token: one statement marks it used only if it still is usable, so two requests racing with the same link
   * cannot both succeed. Returns its user, or null (unknown, used or expired).
   */
  async consumeToken(digest: Buffer, now: Date): Promise<{ userId: string; purpose: TokenPurpose } | null> {
    const [used] = await this.prisma.oneTimeToken.updateManyAndReturn({
      where: { digest: new Uint8Array(digest), usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
      select: { userId: true, purpose: true },
    });
    return used ?? null;
  }

  /**
   * Ends the user's links that were not used yet, or only those of `purpose` (a reset request replaces only earlier
   * reset links: a link someone else made stays good); how many.
   */
  async expireUserTokens(userId: string, now: Date, purpose?: TokenPurpose): Promise<number> {
    const { count } = await this.prisma.oneTimeToken.updateMany({
      where: { userId, usedAt: null, expiresAt: { gt: now }, ...(purpose ? { purpose } : {}) },
      data: { expiresAt: now },
    });
    return count;
  }

  /**
   * Serialises, until the caller's transaction ends, the agency's invitations and new links, so that two requests
   * cannot both see room under a limit and both make one. Hand-written: an advisory lock, which Prisma cannot express.
   */
  async lockAgencyLinks(agencyId: string): Promise<void> {
    await this.prisma
      .$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(${LINKS_LOCK_SPACE}::int, hashtext(${agencyId}))`;
  }

  /**
   * The invitations and new sign-in links dashboard users of the agency made since `since`, oldest first, as the
   * audit log records them (it keeps them for AUDIT_RETENTION_DAYS, whatever happens to the links themselves). The
   * (agency_id, created_at, id) index reads just that stretch of the agency's entries.
   */
  async linksMadeSince(
    agencyId: string,
    since: Date,
    actions: readonly string[],
  ): Promise<{ actorUserId: string | null; createdAt: Date }[]> {
    return this.prisma.auditEntry.findMany({
      where: { agencyId, createdAt: { gt: since }, actorKind: 'user', action: { in: [...actions] } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { actorUserId: true, createdAt: true },
    });
  }
}
