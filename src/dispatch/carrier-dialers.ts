// Which dialer a call goes through (PRODUCT.md, "Placing calls"): its account's own carrier (an agency's, or a
// client's while its agency lets clients choose), else its agency's, else the environment's (DIALER). The claim reads
// which account carrier applies with its candidates (src/storage/calls-carrier.ts); a dialer built from that carrier's
// credentials is kept per account and rebuilt when its row changes (its updated_at), so a dial costs no query of its
// own. Callbacks are checked with the credentials of the carrier their call was dialled with (calls.carrier,
// calls.carrier_account_id), and live-call changes go through that carrier's dialer.
import type { CarrierCredentials, CarrierProvider } from '../../schemas/carrier.js';
import { PROVIDER_NAMES } from '../../schemas/carrier.js';
import type { CarrierInUse, DialIntent, Repositories } from '../storage/index.js';
import type { Dialer } from './dialer.js';
import { SignalWireDialer } from './signalwire-dialer.js';
import { TelnyxDialer } from './telnyx-dialer.js';
import { TwilioDialer } from './twilio-dialer.js';

/** What a call says of the carrier it was dialled with: null columns are the environment's (an older release's call). */
export interface DialledWith {
  carrier: string | null;
  carrierAccountId: string | null;
}

/** The environment's carrier and the addresses every account carrier's dialer uses. */
export interface CarrierDialersOptions {
  /** The environment's dialer (DIALER): every account without a carrier of its own dials through it. */
  environment: Dialer;
  /** Where each carrier calls back: without it an account's carrier cannot be dialled through (no callback). */
  publicBaseUrl: string | undefined;
  twilioApiBaseUrl: string;
  telnyxApiBaseUrl: string;
  /** SignalWire's REST API instead of each space (tests); undefined: the space's own address. */
  signalwireApiBaseUrl: string | undefined;
  /** The environment carrier's callback keys (TWILIO_AUTH_TOKEN, SIGNALWIRE_SIGNING_KEY, TELNYX_PUBLIC_KEY). */
  environmentKeys: Partial<Record<CarrierProvider, string | undefined>>;
  /** The background pool's storage: a dialer not cached yet reads its carrier's credentials through it. */
  storage: Pick<Repositories, 'carriers'>;
}

/** An account's carrier that cannot be dialled through; the dial fails with provider_error, and says why. */
export class CarrierUnusable extends Error {
  override name = 'CarrierUnusable';
}

/** The dialer of a call about to be dialled, and what its intent records of it. */
export interface DialThrough {
  dialer: Dialer;
  intent: Omit<DialIntent, 'id'>;
}

interface Built {
  /** The carrier row's updated_at (ms) the dialer was built from. */
  stamp: number;
  provider: CarrierProvider;
  dialer: Dialer;
}

/** The key a carrier signs its callbacks with: Twilio's auth token, SignalWire's signing key, Telnyx's public key. */
function callbackKeyOf(carrier: CarrierCredentials): string {
  switch (carrier.provider) {
    case 'twilio':
      return carrier.credentials.auth_token;
    case 'signalwire':
      return carrier.credentials.signing_key;
    case 'telnyx':
      return carrier.credentials.public_key;
  }
}

export class CarrierDialers {
  readonly environment: Dialer;
  private readonly built = new Map<string, Built>();

  constructor(private readonly options: CarrierDialersOptions) {
    this.environment = options.environment;
  }

  /**
   * The dialer of a call about to be dialled, with what its intent records: the environment's (`inUse` null), or the
   * account carrier's, from the cache while its row is unchanged (no query, no promise), else read and built once.
   * Throws CarrierUnusable when an account carrier cannot be dialled through (no PUBLIC_BASE_URL, its row gone).
   */
  dialerFor(inUse: CarrierInUse | null): DialThrough | Promise<DialThrough> {
    if (inUse === null)
      return { dialer: this.environment, intent: { carrier: this.environment.kind, carrierAccountId: null } };
    if (!this.options.publicBaseUrl) throw this.noCallbacks(inUse.accountId, inUse.provider);
    const intent = { carrier: inUse.provider, carrierAccountId: inUse.accountId };
    const cached = this.built.get(inUse.accountId);
    if (cached && cached.stamp === Date.parse(inUse.updatedAt) && cached.provider === inUse.provider)
      return { dialer: cached.dialer, intent };
    return this.build(inUse.accountId, this.options.storage).then((built) => ({
      dialer: built.dialer,
      intent: { carrier: built.provider, carrierAccountId: inUse.accountId },
    }));
  }

  /**
   * The dialer a call was dialled with, for changes to it while it is live (the voicemail message, a hang-up): the
   * environment's, or its account carrier's as it is now. Throws CarrierUnusable when that carrier is gone.
   */
  async dialerOf(call: DialledWith, storage: Pick<Repositories, 'carriers'>): Promise<Dialer> {
    if (call.carrierAccountId === null) return this.environment;
    return (await this.build(call.carrierAccountId, storage)).dialer;
  }

  /**
   * The key to check a callback of `kind` about `call` with (null: none, and the callback is refused): the call's
   * account carrier's, or the environment's for a call it dialled (and, `call` null, for a callback naming no call of
   * ours, as before carriers per account). A call dialled with another kind of carrier gets none.
   */
  async callbackKey(
    kind: CarrierProvider,
    call: DialledWith | null,
    storage: Pick<Repositories, 'carriers'>,
  ): Promise<string | null> {
    if (call !== null && call.carrier !== null && call.carrier !== kind) return null;
    if (call?.carrierAccountId) {
      const row = await storage.carriers.findCarrier(call.carrierAccountId);
      return row && row.carrier.provider === kind ? callbackKeyOf(row.carrier) : null;
    }
    return this.environment.kind === kind ? (this.options.environmentKeys[kind] ?? null) : null;
  }

  /** Reads the account's carrier and builds its dialer (or takes the one built from the same row), and keeps it. */
  private async build(accountId: string, storage: Pick<Repositories, 'carriers'>): Promise<Built> {
    const row = await storage.carriers.findCarrier(accountId);
    if (!row) throw new CarrierUnusable(`account ${accountId} has no carrier of its own any more`);
    const stamp = row.updatedAt.getTime();
    const cached = this.built.get(accountId);
    if (cached && cached.stamp === stamp && cached.provider === row.provider) return cached;
    const built = { stamp, provider: row.provider, dialer: this.dialerOfCarrier(accountId, row.carrier) };
    this.built.set(accountId, built);
    return built;
  }

  private noCallbacks(accountId: string, provider: CarrierProvider) {
    return new CarrierUnusable(
      `account ${accountId} dials through its own ${PROVIDER_NAMES[provider]} account, which needs PUBLIC_BASE_URL ` +
        '(where the carrier sends its callbacks): it is not set',
    );
  }

  private dialerOfCarrier(accountId: string, carrier: CarrierCredentials): Dialer {
    const { publicBaseUrl } = this.options;
    if (!publicBaseUrl) throw this.noCallbacks(accountId, carrier.provider);
    switch (carrier.provider) {
      case 'twilio':
        return new TwilioDialer({
          accountSid: carrier.credentials.account_sid,
          authToken: carrier.credentials.auth_token,
          apiBaseUrl: this.options.twilioApiBaseUrl,
          publicBaseUrl,
        });
      case 'telnyx':
        return new TelnyxDialer({
          apiKey: carrier.credentials.api_key,
          connectionId: carrier.credentials.connection_id,
          apiBaseUrl: this.options.telnyxApiBaseUrl,
          publicBaseUrl,
        });
      case 'signalwire':
        return new SignalWireDialer({
          spaceUrl: carrier.credentials.space_url,
          projectId: carrier.credentials.project_id,
          token: carrier.credentials.token,
          publicBaseUrl,
          ...(this.options.signalwireApiBaseUrl ? { apiBaseUrl: this.options.signalwireApiBaseUrl } : {}),
        });
    }
  }
}
