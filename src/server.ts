// Starts the service: configuration, database (embedded or DATABASE_URL), migrations, the HTTPS API and the
// internal listener; closes everything with grace on SIGTERM, SIGINT or SIGHUP.
import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { buildApp } from './app.js';
import type { Server } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config.js';
import { buildInternalApp } from './internal/app.js';
import { loggerOptions } from './logger.js';
import { logFormat, prettyDestination } from './logging/pretty.js';
import { locateDatabase } from './storage/index.js';
import { createStorage, migrate } from './storage/index.js';
import { loadSecrets, sharedKeyWarning } from './secrets/keys.js';
import { prepareStoredSecrets } from './secrets/stored-secrets.js';
import { tlsMaterial } from './tls.js';

const FAULTS: ('SIGILL' | 'SIGTRAP' | 'SIGABRT' | 'SIGBUS' | 'SIGFPE' | 'SIGSEGV')[] = [
  'SIGILL',
  'SIGTRAP',
  'SIGABRT',
  'SIGBUS',
  'SIGFPE',
  'SIGSEGV',
];

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  // Asynchronous writes: lines logged while a write is under way go out together in the next one (under load, one
  // write for many requests instead of a write per request; docs/performance.md#asynchronous-log-writes). pino
  // flushes what is left synchronously when the process exits; only a SIGKILL can lose the lines of that moment.
  // At a terminal the lines are for a person (src/logging/pretty.ts); elsewhere JSON for a collector.
  const format = logFormat(config.LOG_FORMAT, process.stdout, process.env.NODE_ENV);
  const logger = pino(
    loggerOptions(config.LOG_LEVEL) as pino.LoggerOptions,
    format === 'pretty' ? prettyDestination(process.stdout) : pino.destination({ dest: 1, sync: false }),
  );
  const database = await locateDatabase(config, 'server', (msg) => logger.info(msg));
  let app, internal;
  try {
    const migrations = await migrate(database.url);
    if (migrations.applied.length) logger.info({ applied: migrations.applied }, 'migrations applied');
    await prepareSecrets(config, database.url, logger);
    app = await buildApp({ config, databaseUrl: database.url, logger, https: await tlsMaterial(config) });
    internal = await buildInternalApp(app, logger);
  } catch (error) {
    await database.release();
    throw error;
  }

  // Only the signals that ask the service to stop (SIGHUP: its terminal closed). A JavaScript listener on a fault
  // (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT) returns to the faulting instruction, which faults again: the
  // process spins at full CPU instead of ending (Node's documentation of signal events says why).
  closeWithGrace({ delay: 15_000, logger, skip: FAULTS }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down');
    await internal.close();
    // close() waits for in-flight requests; a keep-alive connection that finishes one afterwards would hold it
    // open until the client hangs up, so idle connections are closed as they appear.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close();
    clearInterval(sweep);
    await database.release();
  });

  await app.listen({ port: config.PORT, host: config.HOST });
  await internal.listen({ port: config.INTERNAL_PORT, host: config.INTERNAL_HOST });
  const ready = {
    tls: config.TLS_MODE,
    database: database.embedded ? 'embedded' : 'DATABASE_URL',
    redis: Boolean(config.REDIS_URL),
  };
  const dashboard = dashboardUrl(config, app.server.address());
  // One line with the dashboard's address: a field of the JSON "ready" line, or a line of its own for a person.
  if (format === 'json') logger.info({ ...ready, dashboard }, 'ready');
  else {
    logger.info(ready, 'ready');
    process.stdout.write(`Dashboard: ${dashboard}\n`);
  }
}

/**
 * Before the app (whose workers read secrets once it is ready): the key, then a refusal when the database holds values
 * sealed with a key this process lacks, then the values an earlier release stored in clear sealed.
 */
async function prepareSecrets(config: Config, databaseUrl: string, logger: pino.Logger) {
  const loaded = loadSecrets(config);
  if (loaded.generated) logger.info({ file: loaded.file }, 'secrets key generated');
  const warning = sharedKeyWarning(config, loaded);
  if (warning) logger.warn(warning);
  const storage = createStorage(databaseUrl, { max: 1 });
  try {
    const { sealed } = await prepareStoredSecrets(storage, loaded);
    if (sealed > 0) logger.info({ sealed, key_id: loaded.box.currentKeyId }, 'secrets stored in clear sealed');
  } finally {
    await storage.close();
  }
}

/** Where a browser finds the dashboard: PUBLIC_BASE_URL's, else the listener's (localhost for a wildcard or loopback). */
function dashboardUrl(config: Config, address: ReturnType<Server['address']>): string {
  if (config.PUBLIC_BASE_URL) return `${config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/dashboard`;
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const local = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(config.HOST);
  const host = local ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  // Behind a TLS proxy the listener is plain HTTP and refuses a browser that comes without the proxy.
  if (config.TLS_MODE === 'proxy') return `http://${host}:${port}/dashboard (through your TLS proxy)`;
  return `https://${host}:${port}/dashboard`;
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
