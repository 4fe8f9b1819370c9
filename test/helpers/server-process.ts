// Runs the server as a real child process for end-to-end tests: as `npm start` does (its one-file build) when the
// build is current, else src/server.ts through tsx.
import type { ChildProcess } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import { inject } from 'vitest';
import { freePorts } from '../../src/storage/free-port.js';
import { spawnChild, stopChild } from './child-processes.js';
import { testSecretsKey } from './database.js';

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  internalPort: number;
  output: () => string;
  /** Sends the signal and resolves with the exit code (or the signal name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * One process (not the tsx wrapper, which forks): signals, SIGKILL included, reach the server itself. The build's
 * one file when it holds the current sources (test/global-setup.ts decides, once a run), else the sources through tsx.
 */
export const SERVER_COMMAND: readonly [string, ...string[]] = serverCommand(inject('serverEntry'));

function serverCommand(built: string | null): readonly [string, ...string[]] {
  return built ? [process.execPath, built] : [process.execPath, '--import', 'tsx', path.resolve('src/server.ts')];
}

export interface StartOptions {
  uid?: number;
  gid?: number;
  /** How long it may take to log "ready" before it is killed and the start fails. */
  readyTimeoutMs?: number;
  /** What its output says once it is ready (default: the JSON log's "ready" line). */
  ready?: RegExp;
  /** Runs the server through this command and its arguments (e.g. `script`, for a terminal), default none. */
  wrap?: (command: readonly string[]) => readonly string[];
}

/**
 * Starts the server on two free ports. A port found free can be taken before the server listens on it (by another
 * test process's connection: the system hands out its outgoing ports from the same range), and then the server
 * exits with EADDRINUSE: it is started again on other ports, up to three times.
 */
export async function startServer(env: Record<string, string>, options: StartOptions = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env, options);
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

async function startServerOnce(env: Record<string, string>, options: StartOptions): Promise<ServerProcess> {
  const { readyTimeoutMs = 45_000, ready = /"msg":"ready"/, wrap = (c) => c, ...ids } = options;
  const [port, internalPort] = (await freePorts(2)) as [number, number];
  const [command, ...args] = wrap(SERVER_COMMAND);
  const child = spawnChild(command!, args, {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      INTERNAL_PORT: String(internalPort),
      // The run's secrets key, whatever DATA_DIR the test gives (SECRETS_KEY: '' leaves it unset).
      SECRETS_KEY: testSecretsKey(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...ids,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server did not start in ${readyTimeoutMs} ms:\n${output}`)),
        readyTimeoutMs,
      );
      const check = () => {
        if (ready.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', check);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code}) before ready:\n${output}`));
      });
    });
  } catch (error) {
    // Not ready in time (a loaded machine) or failed: it must not outlive the test that gave up on it.
    await stopChild(child, 'SIGKILL');
    throw error;
  }
  return {
    child,
    port,
    internalPort,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      await stopChild(child, signal);
      return exited;
    },
  };
}

/** An HTTPS request that accepts the self-signed certificate; returns status, headers, body and the peer cert. */
export function httpsRequest(
  port: number,
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; host?: string } = {},
) {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
    fingerprint: string;
  }>((resolve, reject) => {
    const req = https.request(
      {
        host: init.host ?? '127.0.0.1',
        port,
        path: pathname,
        method: init.method ?? 'GET',
        headers: init.headers,
        rejectUnauthorized: false,
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            fingerprint: (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

export async function httpGet(port: number, pathname: string) {
  const res = await fetch(`http://127.0.0.1:${port}${pathname}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
