// The users table: dashboard people, their password hashes, disabling and enabling. Prisma Client only.
import type { Role } from '../domain/roles.js';
import { PrismaRepository } from './driver.js';

/** A user as a signed-in request needs them: who, and the account that scopes everything they see. */
export interface ActiveUser {
  id: string;
  email: string;
  accountId: string;
  accountKind: 'agency' | 'client';
  accountName: string;
  /** The agency at the top: the account itself for agency users. */
  agencyId: string;
  /** The IANA zone the dashboard shows their times in (Account page); null: never chosen, UTC. */
  timezone: string | null;
  /** What they may do in their account (src/domain/roles.ts). */
  role: Role;
}

export interface SignInCandidate {
  id: string;
  email: string;
  accountId: string;
  passwordHash: string | null;
  disabled: boolean;
}

export class UserRepository extends PrismaRepository {
  /**
   * `email` must be normalized (src/domain/user-email.ts); `agencyId` is the agency at the top of `accountId`. An email
   * taken within the same agency throws a unique violation; other agencies' users do not count.
   */
  async insertUser(input: {
    accountId: string;
    agencyId: string;
    email: string;
    role: Role;
    createdAt: Date;
  }): Promise<{ id: string }> {
    return this.prisma.user.create({
      data: {
        accountId: input.accountId,
        agencyId: input.agencyId,
        email: input.email,
        role: input.role,
        createdAt: input.createdAt,
      },
      select: { id: true },
    });
  }

  /**
   * Every user with this (normalized) email, in any agency: an address is unique per agency only. Most recently signed
   * in first, so that a password that opens several of them signs in where the person was last.
   */
  async findUsersByEmail(email: string): Promise<(SignInCandidate & { accountName: string })[]> {
    const users = await this.prisma.user.findMany({
      where: { email },
      orderBy: [{ lastSignInAt: { sort: 'desc', nulls: 'last' } }, { createdAt: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        email: true,
        accountId: true,
        passwordHash: true,
        disabledAt: true,
        account: { select: { name: true } },
      },
    });
    return users.map((user) => ({
      id: user.id,
      email: user.email,
      accountId: user.accountId,
      passwordHash: user.passwordHash,
      disabled: user.disabledAt !== null,
      accountName: user.account.name,
    }));
  }

  /** The user with their account, or null when there is none or they are disabled. */
  async findActiveUser(userId: string): Promise<ActiveUser | null> {
    const user = await this.prisma.user.findUnique({
      where: { id: userId },
      select: {
        id: true,
        email: true,
        disabledAt: true,
        timezone: true,
        role: true,
        account: { select: { id: true, kind: true, name: true, agencyId: true } },
      },
    });
    if (!user || user.disabledAt) return null;
    return {
      id: user.id,
      email: user.email,
      accountId: user.account.id,
      accountKind: user.account.kind,
      accountName: user.account.name,
      agencyId: user.account.agencyId ?? user.account.id,
      timezone: user.timezone,
      role: user.role,
    };
  }

  /** The name of the user's account ('' when there is no such user): callctl names it next to a new link. */
  async accountNameOf(userId: string): Promise<string> {
    const user = await this.prisma.user.findUnique({
      where: { id: userId },
      select: { account: { select: { name: true } } },
    });
    return user?.account.name ?? '';
  }

  /** Any user by id (disabled too), with their password hash: for re-entering or changing a password. */
  async findUserById(userId: string) {
    return this.prisma.user.findUnique({
      where: { id: userId },
      select: {
        id: true,
        email: true,
        accountId: true,
        passwordHash: true,
        disabledAt: true,
        createdAt: true,
        lastSignInAt: true,
        role: true,
      },
    });
  }

  /**
   * The ids of the account's active owners, each row locked until the transaction ends (FOR UPDATE, which Prisma
   * cannot express): a change that could leave the account without one (a demotion, a disabling) counts them under
   * the lock, so two at once are made one after the other and the second sees the first's result.
   */
  async lockActiveOwners(accountId: string): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM users WHERE account_id = ${accountId}::uuid AND role = 'owner' AND disabled_at IS NULL
      ORDER BY id FOR UPDATE`;
    return rows.map((row) => row.id);
  }

  /** Gives the user `role`; false when there is no such user or they already had it. */
  async setRole(userId: string, role: Role): Promise<boolean> {
    const { count } = await this.prisma.user.updateMany({ where: { id: userId, role: { not: role } }, data: { role } });
    return count === 1;
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.prisma.user.update({ where: { id: userId }, data: { passwordHash } });
  }

  async recordSignIn(userId: string, at: Date): Promise<void> {
    await this.prisma.user.update({ where: { id: userId }, data: { lastSignInAt: at } });
  }

  /** Marks the user disabled; returns false when there is no such user or they already were. */
  async markDisabled(userId: string, at: Date): Promise<boolean> {
    const { count } = await this.prisma.user.updateMany({
      where: { id: userId, disabledAt: null },
      data: { disabledAt: at },
    });
    return count === 1;
  }

  /** Enables a disabled user again; returns false when there is no such user or they were not disabled. */
  async markEnabled(userId: string): Promise<boolean> {
    const { count } = await this.prisma.user.updateMany({
      where: { id: userId, disabledAt: { not: null } },
      data: { disabledAt: null },
    });
    return count === 1;
  }

  /** The metadata key the user shows as a column of the Calls list; null: none (or no such user). */
  async callsMetadataColumnOf(userId: string): Promise<string | null> {
    const user = await this.prisma.user.findUnique({ where: { id: userId }, select: { callsMetadataColumn: true } });
    return user?.callsMetadataColumn ?? null;
  }

  /** Remembers the metadata key (1 to 40 characters) the user shows as a column of the Calls list; null: none. */
  async setCallsMetadataColumn(userId: string, key: string | null): Promise<void> {
    await this.prisma.user.update({ where: { id: userId }, data: { callsMetadataColumn: key } });
  }

  /** Sets the zone (a canonical IANA name) the dashboard shows the user's times in; false when there is no such user. */
  async setTimeZone(userId: string, zone: string): Promise<boolean> {
    const { count } = await this.prisma.user.updateMany({ where: { id: userId }, data: { timezone: zone } });
    return count === 1;
  }

  /** The users of the given accounts, oldest first (the Users page). */
  async listUsers(accountIds: string[]) {
    return this.prisma.user
      .findMany({
        where: { accountId: { in: accountIds } },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: {
          id: true,
          email: true,
          accountId: true,
          disabledAt: true,
          createdAt: true,
          lastSignInAt: true,
          passwordHash: true,
          role: true,
        },
      })
      .then((users) => users.map(({ passwordHash, ...user }) => ({ ...user, passwordSet: passwordHash !== null })));
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
