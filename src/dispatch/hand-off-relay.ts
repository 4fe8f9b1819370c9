// A follower's hand-offs to the leading dispatcher through Redis pub/sub (issue 25.4): a NOTIFY costs PostgreSQL a
// transaction of the follower's and a reading transaction of the leader's for every hand-off, about two per call a
// follower accepts at the rates where a follower's NOTIFYs are rarely coalesced; a PUBLISH costs it nothing.
//
// Only a shortcut, never the one path: PUBLISH answers how many subscribers heard it, and a payload nobody heard (no
// leader subscribed yet, Redis down or slow, a leader without Redis) is sent as the NOTIFY it replaces. The leader
// subscribes once it leads (it LISTENs before, so a hand-off published meanwhile comes by NOTIFY) and unsubscribes
// when it no longer does. A hand-off heard by a leader that then dies is found, as with a NOTIFY, by its successor's
// first due-accounts query.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { ThrottledLog } from '../logging/throttled-log.js';

/**
 * The Redis channel of one database's hand-offs (its messages are ACCEPTED_PREFIX payloads, as the NOTIFYs they
 * replace): named by the database, as deployments may share a Redis, and one's leader must never count as having
 * heard another's hand-off.
 */
export function handOffChannel(databaseIdentity: string) {
  return `oct:calls:accepted:${databaseIdentity}`;
}

export interface HandOffRelay {
  /** Publishes each payload; resolves the payloads no subscriber heard (to be sent another way). Never rejects. */
  publish(payloads: readonly string[]): Promise<string[]>;
  /** While this process leads: `onPayload` hears every payload published, until unsubscribe(). Never rejects. */
  subscribe(onPayload: (payload: string) => void): Promise<void>;
  /** Hears nothing more; ends the subscriber's connection (the publisher is its owner's). */
  unsubscribe(): Promise<void>;
}

export interface RedisHandOffOptions {
  /** The process's client (plugins/redis.ts: fails fast, never queues); publishes. */
  publisher: Redis;
  /** Makes the connection the leader subscribes on, each time it leads (a subscribed connection runs nothing else). */
  subscriber: () => Redis;
  /** This database's identity (NotificationRepository.databaseIdentity): asked once, again after a failure. */
  databaseIdentity: () => Promise<string>;
  log: FastifyBaseLogger;
}

export class RedisHandOff implements HandOffRelay {
  private subscriber: Redis | null = null;
  private onPayload: ((payload: string) => void) | null = null;
  private channelName: Promise<string | null> | null = null;
  private readonly logs: ThrottledLog;

  constructor(private readonly options: RedisHandOffOptions) {
    this.logs = new ThrottledLog(options.log);
  }

  async publish(payloads: readonly string[]): Promise<string[]> {
    const { publisher } = this.options;
    // Not connected: a command would fail at once anyway (no offline queue); skip the attempt.
    if (publisher.status !== 'ready') return [...payloads];
    const channel = await this.channel();
    if (channel === null) return [...payloads];
    const heard = await Promise.all(
      payloads.map((payload) =>
        publisher.publish(channel, payload).then(
          (receivers) => receivers > 0,
          (error: Error) => {
            this.logs.warn('publish', { err: error }, 'could not publish a hand-off; sending it by NOTIFY');
            return false;
          },
        ),
      ),
    );
    return payloads.filter((_, i) => !heard[i]);
  }

  async subscribe(onPayload: (payload: string) => void): Promise<void> {
    this.onPayload = onPayload;
    const channel = await this.channel();
    // Unsubscribed or closed meanwhile; or the database could not say who it is (the hand-offs come by NOTIFY).
    if (channel === null || this.onPayload !== onPayload || this.subscriber) return;
    const subscriber = this.options.subscriber();
    subscriber.on('message', (from: string, payload: string) => {
      if (from === channel) this.onPayload?.(payload);
    });
    subscriber.on('error', (error: Error) =>
      this.logs.warn('subscriber', { err: error }, 'hand-off subscriber connection error; hand-offs come by NOTIFY'),
    );
    this.subscriber = subscriber;
    // Until this resolves, followers' PUBLISHes reach nobody and go by NOTIFY, which the leader already hears. While
    // the connection is down they do too; ioredis subscribes again when it is back.
    await subscriber.subscribe(channel).catch((error: Error) => {
      if (this.subscriber === subscriber)
        this.logs.warn('subscribe', { err: error }, 'could not subscribe to hand-offs; they come by NOTIFY');
    });
  }

  /**
   * Ends the subscriber's connection: nothing is then subscribed in this process's name, not even a SUBSCRIBE still
   * queued for a connection that is down (an UNSUBSCRIBE would wait behind it). The next lead opens another.
   */
  async unsubscribe(): Promise<void> {
    this.onPayload = null;
    const subscriber = this.subscriber;
    this.subscriber = null;
    subscriber?.disconnect();
  }

  /** This database's channel; null while the database cannot say (asked again next time). */
  private channel(): Promise<string | null> {
    this.channelName ??= this.options.databaseIdentity().then(handOffChannel, (error: Error) => {
      this.channelName = null;
      this.logs.warn('identity', { err: error }, 'could not read the database identity; hand-offs go by NOTIFY');
      return null;
    });
    return this.channelName;
  }
}
