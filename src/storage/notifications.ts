// PostgreSQL NOTIFY and LISTEN: a notification sent outside any transaction, and a connection of its own that listens
// on a channel (the channels are storage/channels.ts) and may hold the channel's leader lock and its call for help.
import pg from 'pg';
import { statement } from './statements.js';
import { Repository } from './driver.js';
import { behindTransactionPooler } from './database.js';

// Hand-written: Prisma Client has no NOTIFY; the statement of CoalescedNotify (sent after other commits).
const NOTIFY = statement('oct_notify', 'SELECT pg_notify($1, $2)');
// Hand-written, as NOTIFY: several payloads in one statement (a following dispatcher's hand-off, split to fit).
const NOTIFY_EACH = statement('oct_notify_each', 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p');

/** Advisory lock space of the channels' leader locks (the claims' account locks are 72707370: call-claims.ts). */
const LEADER_LOCK_SPACE = 72707371;
/** Advisory lock space of the leaders' calls for help: held by a leader while it wants the followers to claim too. */
const HELP_LOCK_SPACE = 72707372;
// Hand-written: session-level advisory locks on the listening connection itself, which Prisma cannot hold. A follower
// asks in one statement whether it can lead and whether the leader wants help: the help lock is free unless the
// leader holds it, and a shared lock taken to see that is given back at once.
const TRY_LEAD = statement(
  'oct_try_lead',
  `SELECT pg_try_advisory_lock(${LEADER_LOCK_SPACE}, hashtext($1)) AS led,
          CASE WHEN pg_try_advisory_lock_shared(${HELP_LOCK_SPACE}, hashtext($1))
               THEN NOT pg_advisory_unlock_shared(${HELP_LOCK_SPACE}, hashtext($1)) ELSE true END AS help`,
);
const ASK_HELP = statement('oct_ask_help', `SELECT pg_try_advisory_lock(${HELP_LOCK_SPACE}, hashtext($1)) AS asked`);
const END_HELP = statement('oct_end_help', `SELECT pg_advisory_unlock(${HELP_LOCK_SPACE}, hashtext($1))`);

export interface Listener {
  /**
   * Takes the channel's leader lock on this connection, if no other connection holds it: a session-level advisory lock,
   * held until this connection ends (closed, lost, or its process killed), so a leader that dies frees it on its own.
   * Once it holds the lock, the connection LISTENs (before this returns). `leading`: whether it holds it (asking again
   * once it does is harmless: the lock is re-entrant). `helpWanted`: whether the leader, another connection, asks the
   * others for help (askForHelp). Behind a transaction pooler (?pgbouncer=true) always leading, and no lock is taken:
   * a session lock would stay on whichever server connection ran it, outliving this process, so every replica leads
   * (polls) there, as before leadership.
   */
  tryLead(): Promise<{ leading: boolean; helpWanted: boolean }>;
  /**
   * The leader asks the followers for help (true), or stops asking (false): a lock they see on their next tryLead.
   * Goes with the connection, as the lead does. Whether it is asking now (a follower taking a shared look at that
   * moment makes an ask fail: it is asked again at the next occasion).
   */
  askForHelp(wanted: boolean): Promise<boolean>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
}

/**
 * Opens a connection of its own for `channel` (a pooled connection would go back to the pool, its LISTEN and locks with
 * it) and LISTENs on it: at once with `lead: false`; with `lead: true` only once it holds the leader lock (tryLead). A
 * connection that LISTENs reads every NOTIFY of the database in a transaction of its own, whatever its channel
 * (PostgreSQL before 19 tells every listener of every notification), so a follower's would multiply the database's
 * transactions by the number of replicas (issue 25.4). `on.error` hears a failure of the connection, while opening it
 * too (the promise then rejects as well).
 */
export async function listen(
  databaseUrl: string,
  channel: string,
  on: { notification: (payload: string | null) => void; error: (error: Error) => void },
  options: { lead: boolean } = { lead: false },
): Promise<Listener> {
  // Keepalive: a peer gone without a word (a host down) is found, and its leader lock freed, within minutes, not hours.
  const client = new pg.Client({ connectionString: databaseUrl, keepAlive: true });
  client.on('notification', (message) => on.notification(message.payload || null));
  client.on('error', on.error);
  const listenNow = () => client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  let leading = behindTransactionPooler(databaseUrl).pooler;
  let helping = false;
  let asks: Promise<unknown> = Promise.resolve();
  const listener: Listener = {
    async tryLead() {
      // Re-entrant: taken once, not once per ask (each take needs its own unlock).
      if (leading) return { leading, helpWanted: false };
      const { rows } = await client.query<{ led: boolean; help: boolean }>({ ...TRY_LEAD, values: [channel] });
      if (rows[0]?.led === true) {
        await listenNow();
        leading = true;
      }
      return { leading, helpWanted: !leading && rows[0]?.help === true };
    },
    askForHelp(wanted) {
      // One after the other, each on the state the last one left.
      const ask = asks.then(async () => {
        if (wanted === helping) return helping;
        if (wanted) {
          const { rows } = await client.query<{ asked: boolean }>({ ...ASK_HELP, values: [channel] });
          helping = rows[0]?.asked === true;
        } else {
          await client.query({ ...END_HELP, values: [channel] });
          helping = false;
        }
        return helping;
      });
      asks = ask.catch(() => undefined);
      return ask;
    },
    close: () => client.end().catch(() => undefined),
  };
  try {
    await client.connect();
    if (!options.lead || leading) await listenNow();
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
