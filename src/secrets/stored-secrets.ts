// The stored secrets at start and in a rotation (docs/operations.md#secrets): refuse to go on when the database holds
// values sealed with a key this process lacks, seal the values an earlier release stored in clear, and re-wrap the
// values sealed under an earlier key (callctl secrets rotate).
import type { SecretBox } from '../domain/secret-box.js';
import type { Storage } from '../storage/index.js';
import type { LoadedSecrets } from './keys.js';

/** The database holds sealed values no configured key opens: the process must not start (nor seal with another key). */
export class SecretsKeyRefused extends Error {
  override name = 'SecretsKeyRefused';
}

/** The keys in use that `box` lacks, with how many values each seals. */
export async function unknownKeyIds(storage: Storage, box: SecretBox): Promise<Map<string, number>> {
  const inUse = await storage.sealedSecrets.keyIdsInUse();
  return new Map([...inUse].filter(([keyId]) => !box.hasKey(keyId)));
}

function refusal(unknown: Map<string, number>, loaded: LoadedSecrets): string {
  const values = [...unknown].map(([keyId, count]) => `${count} under key id ${keyId}`).join(', ');
  const ours =
    loaded.source === 'SECRETS_KEY'
      ? `SECRETS_KEY and SECRETS_KEY_PREVIOUS hold key ids ${loaded.box.keyIds.join(', ')}`
      : `SECRETS_KEY is not set, and ${loaded.file} holds key id ${loaded.box.currentKeyId}`;
  return (
    `The database holds secrets sealed with a key this process does not have (${values}); ${ours}. ` +
    'Set SECRETS_KEY to the key they were sealed with (or put it in SECRETS_KEY_PREVIOUS beside a new SECRETS_KEY): ' +
    'docs/operations.md#secrets'
  );
}

/**
 * At start, after the migrations and before anything reads a secret: gives the storage the box, refuses
 * (SecretsKeyRefused) when a stored value is sealed under a key the box lacks, and seals the values stored in clear.
 * Idempotent, and safe with several replicas starting at once (each write is a compare-and-set).
 */
export async function prepareStoredSecrets(storage: Storage, loaded: LoadedSecrets): Promise<{ sealed: number }> {
  storage.secrets.use(loaded.box);
  const unknown = await unknownKeyIds(storage, loaded.box);
  if (unknown.size > 0) throw new SecretsKeyRefused(refusal(unknown, loaded));
  return { sealed: await storage.sealedSecrets.sealClear() };
}

/**
 * Every stored secret under the current key: those in clear sealed, those under an earlier key re-wrapped (their data
 * keys only). `remaining`: values still under another key afterwards (written meanwhile by a replica whose SECRETS_KEY
 * is still the old one): run it again once every replica has the new key.
 */
export async function rotateStoredSecrets(storage: Storage) {
  const { currentKeyId } = storage.secrets.codec;
  const sealed = await storage.sealedSecrets.sealClear();
  const rotated = await storage.sealedSecrets.rewrapAll();
  const inUse = await storage.sealedSecrets.keyIdsInUse();
  const remaining = [...inUse].reduce((sum, [keyId, count]) => (keyId === currentKeyId ? sum : sum + count), 0);
  return { rotated, sealed, key_id: currentKeyId, remaining };
}
