// PostgreSQL NOTIFY and LISTEN: a notification sent outside any transaction, and a connection of its own that listens
// on a channel (the channels are storage/channels.ts).
import pg from 'pg';
import { statement } from './statements.js';
import { Repository } from './driver.js';

// Hand-written: Prisma Client has no NOTIFY; the one statement of CoalescedNotify, sent after other commits.
const NOTIFY = statement('oct_notify', 'SELECT pg_notify($1, NULL)');

export interface Listener {
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
  on: { notification: () => void; error: (error: Error) => void },
): Promise<Listener> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('notification', on.notification);
  client.on('error', on.error);
  const listener: Listener = { close: () => client.end().catch(() => undefined) };
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
  async notify(channel: string): Promise<void> {
    await this.pool.query({ ...NOTIFY, values: [channel] });
  }
}
