// PostgreSQL NOTIFY and LISTEN: a notification sent outside any transaction, and a connection of its own that listens
// on channels (the channels are storage/channels.ts) and may hold their leader locks and calls for help.
// Hand-written on the pool and on its own connection: NOTIFY, LISTEN and advisory locks have no Prisma form.
import pg from 'pg';
import { statement } from './statements.js';
import { SqlRepository } from './driver.js';
import { behindTransactionPooler } from './database.js';

// Hand-written: Prisma Client has no NOTIFY; the statement of CoalescedNotify (sent after other commits).
const NOTIFY = statement('oct_notify', 'SELECT pg_notify($1, $2)');
// Hand-written, as NOTIFY: several payloads in one statement (a following dispatcher's hand-off, split to fit).
const NOTIFY_EACH = statement('oct_notify_each', 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p');
// Hand-written: what names this database outside it (the dispatchers' Redis channel, src/dispatch/hand-off-relay.ts),
// the same for every replica however it connects: the cluster's system identifier (random at initdb) and the oid.
const DATABASE_IDENTITY = statement(
  'oct_database_identity',
  `SELECT (SELECT system_identifier FROM pg_control_system())::text || '.' || d.oid::text AS id
     FROM pg_database d WHERE d.datname = current_database()`,
);

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
/** The application_name of the LISTEN connections. */
export const LISTEN_APPLICATION_NAME = 'oct-listen';
/** How long a listener that closes waits for its locks to be given back before the whole connection is ended. */
const CLOSE_TIMEOUT_MS = 2_000;
const GIVE_UP_LEAD = statement('oct_give_up_lead', `SELECT pg_advisory_unlock(${LEADER_LOCK_SPACE}, hashtext($1))`);

export interface Listener {
  /**
   * Takes the channel's leader lock on this connection, if no other connection holds it: a session-level advisory lock,
   * held until this listener closes or its connection ends (closed, lost, or its process killed), so a leader that dies
   * frees it on its own. Once it holds the lock, the connection LISTENs on the channel (before this returns).
   * `leading`: whether it holds it (asking again once it does is harmless). `helpWanted`: whether the leader, another
   * connection, asks the others for help (askForHelp). Behind a transaction pooler (?pgbouncer=true) always leading,
   * and no lock is taken: a session lock would stay on whichever server connection ran it, outliving this process, so
   * every replica leads (polls) there, as before leadership.
   */
  tryLead(): Promise<{ leading: boolean; helpWanted: boolean }>;
  /**
   * The leader asks the followers for help (true), or stops asking (false): a lock they see on their next tryLead.
   * Goes with the lead. Whether it is asking now (a follower taking a shared look at that moment makes an ask fail: it
   * is asked again at the next occasion).
   */
  askForHelp(wanted: boolean): Promise<boolean>;
  /** Gives up the channel (its LISTEN and locks), and the connection with its last listener; never throws. */
  close(): Promise<void>;
}

/** What a listener hears: its channel's notifications, the connection's failure, and another listener's new lead. */
export interface ListenerEvents {
  notification: (payload: string | null) => void;
  /** The connection failed (while opening it too: listen() then rejects as well); the listener is closed. */
  error: (error: Error) => void;
  /**
   * Another listener on the same connection took its channel's lead: this one may try now, so that one replica leads
   * every channel (one connection reading the notifications, not one per channel and replica).
   */
  leadTaken?: () => void;
}

interface Subscription {
  channel: string;
  on: ListenerEvents;
  listening: boolean;
  leading: boolean;
  helping: boolean;
}

/**
 * One connection of its own that LISTENs for several channels (a pooled connection would go back to the pool, its
 * LISTEN and locks with it), and holds their leader locks. A connection that LISTENs reads every NOTIFY of the database
 * in a transaction of its own, whatever its channel (PostgreSQL before 19 tells every listener of every notification):
 * the dispatcher and the webhook worker of a process share one, so a notification costs the leading replica one such
 * transaction, not one per channel; and a follower does not LISTEN (issue 25.4). Opened on the first listen(), closed
 * with the last listener, opened again by the next listen() after it failed.
 */
export class ListenConnection {
  private client: Promise<pg.Client> | null = null;
  private readonly subscriptions = new Set<Subscription>();
  /** Lock statements, one after the other, each on the state the last one left. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Whether the URL goes through a transaction pooler; read on the first listen() (a loop that never starts needs no URL). */
  private poolerFlag: boolean | null = null;

  constructor(private readonly databaseUrl: string) {}

  private get pooler(): boolean {
    return (this.poolerFlag ??= behindTransactionPooler(this.databaseUrl).pooler);
  }

  /**
   * LISTENs for `channel`: at once with `lead: false`; with `lead: true` only once this connection holds the channel's
   * leader lock (tryLead). One listener per channel: a second on the same connection would share the first's session,
   * its lock included.
   */
  async listen(channel: string, on: ListenerEvents, options: { lead: boolean } = { lead: false }): Promise<Listener> {
    if ([...this.subscriptions].some((s) => s.channel === channel)) throw new Error(`already listening for ${channel}`);
    const subscription: Subscription = { channel, on, listening: false, leading: this.pooler, helping: false };
    this.subscriptions.add(subscription);
    try {
      const client = await this.connected();
      if (!options.lead || subscription.leading) await this.startListening(client, subscription);
    } catch (error) {
      // A failed connection told every listener already (failed()); a failed LISTEN is this listener's alone.
      if (this.subscriptions.delete(subscription)) on.error(error as Error);
      throw error;
    }
    return {
      tryLead: () => this.tryLead(subscription),
      askForHelp: (wanted) => this.askForHelp(subscription, wanted),
      close: () => this.close(subscription),
    };
  }

  private connected(): Promise<pg.Client> {
    if (this.client) return this.client;
    // Keepalive: a peer gone without a word (a host down) is found, and its leader locks freed, within minutes.
    // Named, so an operator sees which backend listens (pg_stat_activity.application_name).
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      keepAlive: true,
      application_name: LISTEN_APPLICATION_NAME,
    });
    client.on('notification', (message) => {
      for (const s of this.subscriptions)
        if (s.listening && s.channel === message.channel) s.on.notification(message.payload || null);
    });
    // pg may both emit 'error' and reject connect() for one failure: each listener hears it once.
    client.on('error', (error) => this.failed(connecting, error));
    const connecting = client.connect().then(
      () => client,
      (error: Error) => {
        this.failed(connecting, error);
        throw error;
      },
    );
    this.client = connecting;
    return connecting;
  }

  /** The connection `which` failed: every listener on it hears so once and is gone; the next listen() opens another. */
  private failed(which: Promise<pg.Client>, error: Error) {
    if (this.client !== which) return;
    this.client = null;
    const lost = [...this.subscriptions];
    this.subscriptions.clear();
    void which.then((client) => client.end()).catch(() => undefined);
    for (const s of lost) s.on.error(error);
  }

  private async startListening(client: pg.Client, subscription: Subscription) {
    if (!this.isListening(subscription.channel))
      await client.query(`LISTEN ${client.escapeIdentifier(subscription.channel)}`);
    subscription.listening = true;
  }

  private isListening(channel: string) {
    return [...this.subscriptions].some((s) => s.listening && s.channel === channel);
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private tryLead(subscription: Subscription) {
    return this.serially(async () => {
      // Held once per listener, not once per ask (each take needs its own unlock).
      const connection = this.subscriptions.has(subscription) ? this.client : null;
      if (subscription.leading || !connection) return { leading: subscription.leading, helpWanted: false };
      const client = await connection;
      const { rows } = await client.query<{ led: boolean; help: boolean }>({
        ...TRY_LEAD,
        values: [subscription.channel],
      });
      if (rows[0]?.led !== true) return { leading: false, helpWanted: rows[0]?.help === true };
      subscription.leading = true;
      await this.startListening(client, subscription);
      for (const other of this.subscriptions) if (other !== subscription && !other.leading) other.on.leadTaken?.();
      return { leading: true, helpWanted: false };
    });
  }

  private askForHelp(subscription: Subscription, wanted: boolean) {
    return this.serially(async () => {
      const client = this.subscriptions.has(subscription) ? this.client : null;
      if (!client || wanted === subscription.helping || !subscription.leading || this.pooler)
        return subscription.helping;
      const c = await client;
      if (wanted) {
        const { rows } = await c.query<{ asked: boolean }>({ ...ASK_HELP, values: [subscription.channel] });
        subscription.helping = rows[0]?.asked === true;
      } else {
        await c.query({ ...END_HELP, values: [subscription.channel] });
        subscription.helping = false;
      }
      return subscription.helping;
    });
  }

  private async close(subscription: Subscription) {
    if (!this.subscriptions.delete(subscription)) return;
    const client = this.client;
    if (!client) return;
    if (this.subscriptions.size === 0) {
      // The locks and the LISTEN go with the session; not behind a statement that may be waiting on a stalled server.
      this.client = null;
      await client.then((c) => c.end()).catch(() => undefined);
      return;
    }
    const giveUp = this.serially(async () => {
      const c = await client;
      if (subscription.helping) await c.query({ ...END_HELP, values: [subscription.channel] });
      if (subscription.leading && !this.pooler) await c.query({ ...GIVE_UP_LEAD, values: [subscription.channel] });
      if (subscription.listening && !this.isListening(subscription.channel))
        await c.query(`UNLISTEN ${c.escapeIdentifier(subscription.channel)}`);
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`giving up a lead timed out after ${CLOSE_TIMEOUT_MS} ms`)),
        CLOSE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([giveUp, late]);
    } catch (error) {
      // A connection that does not answer is ended: its locks go with it, and the other listeners open another.
      this.failed(client, error as Error);
    } finally {
      clearTimeout(timer);
    }
  }
}

export class NotificationRepository extends SqlRepository {
  /** A NOTIFY on `channel`, with `payload` or none. */
  async notify(channel: string, payload: string | null = null): Promise<void> {
    await this.pool.query({ ...NOTIFY, values: [channel, payload] });
  }

  /**
   * This database's name among all others (two deployments may share a Redis): its cluster's system identifier and
   * its oid.
   */
  async databaseIdentity(): Promise<string> {
    const { rows } = await this.pool.query<{ id: string }>(DATABASE_IDENTITY);
    return rows[0]!.id;
  }

  /** One NOTIFY on `channel` per payload, all in one statement. */
  async notifyEach(channel: string, payloads: readonly string[]): Promise<void> {
    await this.pool.query({ ...NOTIFY_EACH, values: [channel, payloads] });
  }
}
