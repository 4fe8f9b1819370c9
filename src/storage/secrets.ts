// Secrets at rest as the storage keeps them: the columns that hold sealed values, the place each value is bound to, and
// the vault that seals what a repository writes and opens what it reads (with the process's SecretBox,
// src/domain/secret-box.ts, which plugins/secrets.ts or callctl hands it). Callers see values in clear only.
import type { SecretBox } from '../domain/secret-box.js';

/** What the vault needs of a SecretBox. */
export type SecretCodec = Pick<SecretBox, 'seal' | 'open' | 'rewrap' | 'hasKey' | 'currentKeyId'>;

/** How a sealed value starts (src/domain/secret-box.ts writes it; test/domain/secret-box.test.ts checks they agree). */
export const SEALED_PREFIX = 'sealed.';

/** Where each kind of value lives: the additional data it is sealed with, so a value copied elsewhere does not open. */
export const SECRET_PLACES = {
  /** An account's webhook signing secret (one endpoint per account: the account names the row for good). */
  webhookSecret: (accountId: string) => `webhook_endpoints.secret:${accountId}`,
  /** A key the service signs with, by purpose (the runtime's context tokens). */
  signingKey: (purpose: string) => `signing_keys.key:${purpose}`,
  /** An account's own carrier's credentials (one JSON object: tokens, keys). */
  carrierCredentials: (accountId: string) => `account_carriers.credentials:${accountId}`,
} as const;

/**
 * A column of sealed values: its table, the row's key (and its SQL type), the column naming the row's place, and the
 * place. Start-up sealing, the refusal check and the rotation go over every one of them (sealed-secrets.ts).
 */
export interface SealedColumn {
  table: string;
  key: string;
  keyType: 'uuid' | 'text';
  value: string;
  owner: string;
  place: (owner: string) => string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'webhook_endpoints',
    key: 'id',
    keyType: 'uuid',
    value: 'secret',
    owner: 'account_id',
    place: SECRET_PLACES.webhookSecret,
  },
  {
    table: 'signing_keys',
    key: 'purpose',
    keyType: 'text',
    value: 'key',
    owner: 'purpose',
    place: SECRET_PLACES.signingKey,
  },
  {
    table: 'account_carriers',
    key: 'account_id',
    keyType: 'uuid',
    value: 'credentials',
    owner: 'account_id',
    place: SECRET_PLACES.carrierCredentials,
  },
];

export class SecretsKeyMissing extends Error {
  override name = 'SecretsKeyMissing';
}

/**
 * The storage's seal and open. Until a box is given (`use`), nothing can be sealed and only values stored in clear (by
 * an earlier release, before start-up sealed them) can be read: a storage never writes a secret in clear.
 */
export class SecretVault {
  private box: SecretCodec | (() => SecretCodec) | null = null;

  /** The box, or how to get it when it is first needed (the key file is read then: the app is built without it). */
  use(box: SecretCodec | (() => SecretCodec)): void {
    this.box = box;
  }

  /** The box, or a clear error naming what is missing. */
  get codec(): SecretCodec {
    if (!this.box)
      throw new SecretsKeyMissing('No secrets key is loaded for this storage (plugins/secrets.ts and callctl load it)');
    if (typeof this.box === 'function') this.box = this.box();
    return this.box;
  }

  seal(plaintext: string, place: string): string {
    return this.codec.seal(plaintext, place);
  }

  /** The value in clear: opened when sealed, as stored when an earlier release stored it in clear. */
  open(stored: string, place: string): string {
    return stored.startsWith(SEALED_PREFIX) ? this.codec.open(stored, place) : stored;
  }
}
