// The secrets key's configuration: SECRETS_KEY and SECRETS_KEY_PREVIOUS refused with a clear message when they are not
// keys, and without them the key of DATA_DIR/secrets.key, made once (0600) and kept.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { secretsKeyId } from '../../src/domain/secret-box.js';
import { loadSecrets, sharedKeyWarning } from '../../src/secrets/keys.js';
import { atFileEnd } from '../helpers/file-end.js';

const key = () => randomBytes(32).toString('base64');

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-secrets-key-'));
  atFileEnd(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('SECRETS_KEY', () => {
  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['base64url', randomBytes(32).toString('base64url')],
    ['words', 'correct horse battery staple'],
  ])('is refused when it is %s, without showing it', (_, value) => {
    expect(() => loadConfig({ SECRETS_KEY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRETS_KEY: value })).toThrow(
      'SECRETS_KEY: must be the base64 of exactly 32 bytes (openssl rand -base64 32)',
    );
    try {
      loadConfig({ SECRETS_KEY: value });
    } catch (error) {
      expect((error as Error).message).not.toContain(value);
    }
  });

  it('SECRETS_KEY_PREVIOUS must be keys, and needs SECRETS_KEY beside it', () => {
    expect(() => loadConfig({ SECRETS_KEY: key(), SECRETS_KEY_PREVIOUS: `${key()},nope` })).toThrow(
      'SECRETS_KEY_PREVIOUS: must be base64 keys of exactly 32 bytes, separated by commas',
    );
    expect(() => loadConfig({ SECRETS_KEY_PREVIOUS: key() })).toThrow('SECRETS_KEY_PREVIOUS: needs SECRETS_KEY');
    const [current, previous] = [key(), key()];
    const { box, source } = loadSecrets(loadConfig({ SECRETS_KEY: current, SECRETS_KEY_PREVIOUS: previous }));
    expect(source).toBe('SECRETS_KEY');
    expect(box.keyIds).toEqual([current, previous].map((k) => secretsKeyId(Buffer.from(k, 'base64'))));
  });
});

describe('without SECRETS_KEY', () => {
  it('makes DATA_DIR/secrets.key once (0600) and reads it after', () => {
    const dataDir = path.join(tempDir(), 'data');
    const config = loadConfig({ DATA_DIR: dataDir });
    const first = loadSecrets(config);
    expect(first).toMatchObject({ source: 'file', file: path.join(dataDir, 'secrets.key'), generated: true });
    expect(fs.statSync(first.file!).mode & 0o777).toBe(0o600);
    const again = loadSecrets(config);
    expect(again.generated).toBe(false);
    expect(again.box.currentKeyId).toBe(first.box.currentKeyId);
    // No draft left behind.
    expect(fs.readdirSync(dataDir)).toEqual(['secrets.key']);
  });

  it('refuses a key file that holds no key, naming it', () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, 'secrets.key'), 'not a key\n');
    expect(() => loadSecrets(loadConfig({ DATA_DIR: dataDir }))).toThrow(/secrets\.key does not hold a secrets key/);
  });

  it('warns that replicas must share one SECRETS_KEY when the database is shared', () => {
    const dataDir = tempDir();
    const shared = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'postgresql://db/calls' });
    expect(sharedKeyWarning(shared, loadSecrets(shared))).toMatch(
      /Replicas sharing DATABASE_URL must share one SECRETS_KEY/,
    );
    const embedded = loadConfig({ DATA_DIR: dataDir });
    expect(sharedKeyWarning(embedded, loadSecrets(embedded))).toBeNull();
    const configured = loadConfig({ DATABASE_URL: 'postgresql://db/calls', SECRETS_KEY: key() });
    expect(sharedKeyWarning(configured, loadSecrets(configured))).toBeNull();
  });
});
