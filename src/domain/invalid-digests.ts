// Key digests found unknown or revoked, remembered so that refusing them again needs no query.

/** Digests remembered at most; when full, the memory starts over (forgetting one only costs it a lookup again). */
const MAX_INVALID_DIGESTS = 10_000;

/**
 * Keys are 256-bit random values made only by generateApiKey (never from a chosen value) and revocation is never
 * undone, so a digest the lookup found unknown or revoked can never authenticate. A digest that matched is never
 * remembered: a working key is looked up on every request, so rotation and revocation hold at once on every replica.
 */
export class InvalidDigests {
  private readonly digests = new Set<string>();

  constructor(private readonly capacity = MAX_INVALID_DIGESTS) {}

  has(digest: Buffer): boolean {
    return this.digests.has(digest.toString('base64'));
  }

  add(digest: Buffer): void {
    if (this.digests.size >= this.capacity) this.digests.clear();
    this.digests.add(digest.toString('base64'));
  }
}
