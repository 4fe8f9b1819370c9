// The process's secrets keys (docs/operations.md#secrets): SECRETS_KEY and SECRETS_KEY_PREVIOUS, or without them the
// key of DATA_DIR/secrets.key, generated on first start as the self-signed certificate is (src/tls.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import { decodeSecretsKey, decodeSecretsKeyList, SecretBox } from '../domain/secret-box.js';

export const SECRETS_KEY_FILE = 'secrets.key';

export interface LoadedSecrets {
  box: SecretBox;
  /** Where the current key came from: the environment, or the file under DATA_DIR (`generated` now or before). */
  source: 'SECRETS_KEY' | 'file';
  file: string | null;
  generated: boolean;
}

function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = decodeSecretsKey(text);
  if (!key)
    throw new Error(`${file} does not hold a secrets key (the base64 of 32 bytes); set SECRETS_KEY or restore it`);
  return key;
}

/**
 * DATA_DIR/secrets.key, made now if there is none. Written under a name of its own and linked into place: of two
 * processes starting together on one DATA_DIR, one key wins and both read it, never a half-written file. Synchronous:
 * one small file, read once per process, on the first secret it seals or opens (or at start, src/server.ts).
 */
function keyFileKey(dataDir: string): { key: Buffer; file: string; generated: boolean } {
  const file = path.join(dataDir, SECRETS_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) return { key: existing, file, generated: false };
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(draft, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.unlinkSync(draft);
  }
  const key = readKeyFile(file);
  if (!key) throw new Error(`${file} vanished while it was made`);
  return { key, file, generated: true };
}

/** The keys this process seals and opens with. */
export function loadSecrets(config: Config): LoadedSecrets {
  if (config.SECRETS_KEY) {
    const previous = config.SECRETS_KEY_PREVIOUS ? decodeSecretsKeyList(config.SECRETS_KEY_PREVIOUS)! : [];
    return {
      box: new SecretBox(decodeSecretsKey(config.SECRETS_KEY)!, previous),
      source: 'SECRETS_KEY',
      file: null,
      generated: false,
    };
  }
  const { key, file, generated } = keyFileKey(config.dataDir);
  return { box: new SecretBox(key), source: 'file', file, generated };
}

/** Said at start when replicas could each be sealing with a key of their own. */
export function sharedKeyWarning(config: Config, loaded: LoadedSecrets): string | null {
  if (!config.DATABASE_URL || loaded.source === 'SECRETS_KEY') return null;
  return `SECRETS_KEY is not set: secrets are sealed with ${loaded.file}, a key of this host alone. Replicas sharing DATABASE_URL must share one SECRETS_KEY (docs/operations.md#secrets)`;
}
