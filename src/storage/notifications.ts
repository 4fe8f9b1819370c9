// PostgreSQL NOTIFY and LISTEN: a notification sent outside any transaction, and a connection of its own that listens
// on a channel (the channels are storage/channels.ts) and may hold the channel's leader lock.
import pg from 'pg';
import { statement } from './statements.js';
import { Repository } from './driver.js';
import { behindTransactionPooler } from './database.js';

// Hand-written: Prisma Client has no NOTIFY; the statement of CoalescedNotify (sent after other commits) and of the
// leading dispatcher's call for help.
const NOTIFY = statement('oct_notify', 'SELECT pg_notify($1, $2)');
// Hand-written, as NOTIFY: several payloads in one statement (a following dispatcher's hand-off, split to fit).
const NOTIFY_EACH = statement('oct_notify_each', 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p');

/** Advisory lock space of the channels' leader locks (the claims' account locks are 72707370: call-claims.ts). */
const LEADER_LOCK_SPACE = 72707371;
// Hand-written: a session-level advisory lock on the listening connection itself, which Prisma cannot hold.
const TRY_LEAD = statement('oct_try_lead', `SELECT pg_try_advisory_lock(${LEADER_LOCK_SPACE}, hashtext($1)) AS led`);

export interface Listener {
  /**
   * Takes the channel's leader lock on this connection, if no other connection holds it: a session-level advisory lock,
   * held until this connection ends (closed, lost, or its process killed), so a leader that dies frees it on its own.
   * Returns whether this connection holds it (asking again once it does is harmless: the lock is re-entrant). Behind
   * a transaction pooler (?pgbouncer=true) always true, and no lock is taken: a session lock would stay on whichever
   * server connection ran it, outliving this process, so every replica leads (polls) there, as before leadership.
   */
  tryLead(): Promise<boolean>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
}

/**
 * Opens a connection of its own and LISTENs on `channel` (a pooled connection would go back to the pool, its LISTEN
 * with it). `onError` hears a failure of the connection, while opening it too (the promise then rejects as well).
 */
export async function listen(
  databaseUrl: string,
  channel: string,
  on: { notification: (payload: string | null) => void; error: (error: Error) => void },
): Promise<Listener> {
  // Keepalive: a peer gone without a word (a host down) is found, and its leader lock freed, within minutes, not hours.
  const client = new pg.Client({ connectionString: databaseUrl, keepAlive: true });
  client.on('notification', (message) => on.notification(message.payload || null));
  client.on('error', on.error);
  let leading = behindTransactionPooler(databaseUrl).pooler;
  const listener: Listener = {
    async tryLead() {
      // Re-entrant: taken once, not once per ask (each take needs its own unlock).
      if (leading) return true;
      const { rows } = await client.query<{ led: boolean }>({ ...TRY_LEAD, values: [channel] });
      leading = rows[0]?.led === true;
      return leading;
    },
    close: () => client.end().catch(() => undefined),
  };
  try {
    await client.connect();
    await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  } catch (error) {
    void listener.close();
    throw error;
  }
  return listener;
}

export class NotificationRepository extends Repository {
  /** A NOTIFY on `channel`, with `payload` or none. */
  async notify(channel: string, payload: string | null = null): Promise<void> {
    await this.pool.query({ ...NOTIFY, values: [channel, payload] });
  }

  /** One NOTIFY on `channel` per payload, all in one statement. */
  async notifyEach(channel: string, payloads: readonly string[]): Promise<void> {
    await this.pool.query({ ...NOTIFY_EACH, values: [channel, payloads] });
  }
}
