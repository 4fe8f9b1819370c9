// TLS material for the API listener per TLS_MODE: a self-signed certificate made once, files, or none (proxy).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import type { Config } from './config.js';

export interface TlsMaterial {
  key: string;
  cert: string;
}

async function readPair(keyFile: string, certFile: string): Promise<TlsMaterial | null> {
  try {
    return { key: await fs.readFile(keyFile, 'utf8'), cert: await fs.readFile(certFile, 'utf8') };
  } catch {
    return null;
  }
}

/** Generated on first start into DATA_DIR/tls and reused after, so clients can pin it. */
export async function selfSignedCertificate(dataDir: string): Promise<TlsMaterial> {
  const dir = path.join(dataDir, 'tls');
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  const existing = await readPair(keyFile, certFile);
  if (existing) return existing;
  const now = new Date();
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 825 * 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: os.hostname() },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // Write the key first and the certificate last: a half-written pair is regenerated next start.
  await fs.writeFile(keyFile, pems.private, { mode: 0o600 });
  await fs.writeFile(certFile, pems.cert, { mode: 0o644 });
  return { key: pems.private, cert: pems.cert };
}

export async function tlsMaterial(config: Config): Promise<TlsMaterial | null> {
  switch (config.TLS_MODE) {
    case 'proxy':
      return null;
    case 'files': {
      const pair = await readPair(config.TLS_KEY_FILE!, config.TLS_CERT_FILE!);
      if (!pair)
        throw new Error(`cannot read TLS_KEY_FILE (${config.TLS_KEY_FILE}) or TLS_CERT_FILE (${config.TLS_CERT_FILE})`);
      return pair;
    }
    case 'self-signed':
      return selfSignedCertificate(config.dataDir);
  }
}
