// A dashboard user's own time zone (the Account page): a zone the server knows, stored by its canonical name,
// audited like the user's other changes to their own record.
import { canonicalTimeZone } from '../domain/time-zones.js';
import type { Storage } from '../storage/index.js';
import { audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';

/** The problem shown next to the field when the zone is not one the server knows. */
export const UNKNOWN_ZONE = 'Choose a time zone from the list (an IANA name such as Europe/Paris).';

/**
 * Sets the signed-in user's own time zone: `zone` in any spelling of an IANA zone (links followed, Etc/UTC is UTC),
 * stored by its canonical name; a UTC offset or an unknown name is refused with a problem for the field. The zone
 * is the actor's own setting, so only a user acts here; choosing the zone already stored changes and audits nothing.
 */
export async function setOwnTimeZone(
  storage: Storage,
  input: { zone: string; actor: Actor; now: Date },
): Promise<{ ok: true; zone: string; changed: boolean } | { ok: false; problem: string }> {
  const { actor } = input;
  if (actor.kind !== 'user') throw new AdminError('Only a dashboard user has a time zone of their own.');
  const zone = canonicalTimeZone(input.zone);
  if (zone === null) return { ok: false, problem: UNKNOWN_ZONE };
  return storage.transaction(async (tx) => {
    const user = await tx.users.findActiveUser(actor.userId);
    if (!user) throw new AdminError(`No user ${actor.userId}`);
    if (user.timezone === zone) return { ok: true, zone, changed: false };
    await tx.users.setTimeZone(user.id, zone);
    await audit(tx, user.accountId, { kind: 'user', userId: user.id, ip: actor.ip }, 'time_zone_set', input.now, {
      time_zone: zone,
      before: user.timezone,
    });
    return { ok: true, zone, changed: true };
  });
}
