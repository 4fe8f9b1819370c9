// The signing_keys table: keys the service signs with (the runtime's context tokens), one per purpose, made by the
// first process that needs one and then read by every replica. Each is sealed at rest (secrets.ts). Prisma Client.
import { PrismaRepository } from './driver.js';
import { SECRET_PLACES } from './secrets.js';

export class SigningKeyRepository extends PrismaRepository {
  /**
   * The key for `purpose` (base64): the stored one, or `candidate` stored now if there is none. Two processes starting
   * together both end up with the one that was stored first.
   */
  async ensureKey(purpose: string, candidate: string, now: Date): Promise<string> {
    await this.prisma.signingKey.createMany({
      data: [{ purpose, key: this.secrets.seal(candidate, SECRET_PLACES.signingKey(purpose)), createdAt: now }],
      skipDuplicates: true,
    });
    const stored = await this.prisma.signingKey.findUniqueOrThrow({ where: { purpose }, select: { key: true } });
    return this.secrets.open(stored.key, SECRET_PLACES.signingKey(purpose));
  }
}
