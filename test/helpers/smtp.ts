// A real SMTP server for tests (the smtp-server package) on 127.0.0.1 and a free port: it keeps every message it
// receives, decoded enough to read a plain-text e-mail (quoted-printable or base64 body). Stop it in a finally.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

export interface TestSmtp {
  url: string;
  received: ReceivedMail[];
  /** Waits until `count` messages have arrived (or `timeoutMs` passed: then it throws). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

function decodeBody(headers: string, body: string): string {
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

function parse(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const subject = /^subject:\s*(.*)$/im.exec(headers)?.[1] ?? '';
  return { ...envelope, subject, text: decodeBody(headers, raw.slice(split + 4)).replace(/\r\n/g, '\n') };
}

export async function startSmtp(options: { user?: string; pass?: string } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    // No TLS on the loopback test server; a login, when asked for, goes over plain text.
    disabledCommands: options.user ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: !options.user,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.pass)
        return callback(null, { user: auth.username });
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        received.push(parse(Buffer.concat(chunks).toString('utf8'), envelope));
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  const auth = options.user ? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.pass ?? '')}@` : '';
  return {
    url: `smtp://${auth}127.0.0.1:${port}`,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`expected ${count} e-mails, got ${received.length}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
