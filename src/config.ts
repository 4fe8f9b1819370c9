// Environment -> typed, validated configuration. Fails fast with a message naming each bad variable.
import { CARRIER_SETTINGS, carrierProblems } from './config-carriers.js';
import path from 'node:path';
import { KindGuard, Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { decodeSecretsKey, decodeSecretsKeyList } from './domain/secret-box.js';

const Port = (description: string, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: 65535, default: fallback, description });
const Flag = (description: string, fallback: boolean) => Type.Boolean({ default: fallback, description });
const Positive = (description: string, fallback: number) =>
  Type.Integer({ minimum: 1, default: fallback, description });
const NonNegative = (description: string, fallback: number) =>
  Type.Integer({ minimum: 0, default: fallback, description });
const Url = (description: string) => Type.Optional(Type.String({ minLength: 1, description }));

/** Every environment variable the service reads; README's configuration table mirrors this. */
export const ConfigSchema = Type.Object({
  PORT: Port('The API listener', 8443),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Address the API listener binds' }),
  INTERNAL_PORT: Port('Health and metrics listener (no auth, not for the internet)', 9464),
  // Loopback unless asked: the internal listener has no auth. Docker's HEALTHCHECK runs inside the container and
  // reaches it there; Kubernetes probes and scrapers from elsewhere need INTERNAL_HOST=0.0.0.0 (README).
  INTERNAL_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Address the internal (health and metrics) listener binds',
  }),
  DATA_DIR: Type.String({
    minLength: 1,
    default: '.data',
    description: 'Embedded database and generated TLS certificate',
  }),
  DATABASE_URL: Url('PostgreSQL connection string; unset = embedded PostgreSQL under DATA_DIR'),
  REDIS_URL: Url(
    'Redis for rate limits shared across replicas and their hand-offs to the leading dispatcher; unset = in-process limits, hand-offs by NOTIFY',
  ),
  TLS_MODE: Type.Union([Type.Literal('self-signed'), Type.Literal('files'), Type.Literal('proxy')], {
    default: 'self-signed',
    description: 'self-signed | files | proxy',
  }),
  TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1, description: 'PEM certificate (TLS_MODE=files)' })),
  TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1, description: 'PEM private key (TLS_MODE=files)' })),
  TRUST_PROXY: Flag('Honour X-Forwarded-For; implied by TLS_MODE=proxy', false),
  ...CARRIER_SETTINGS,
  PUBLIC_BASE_URL: Url('Public https address of this service, for provider callbacks'),
  AGENT_STREAM_URL: Url("wss:// media-stream address of the voice-agent runtime (an agent's own stream_url wins)"),
  AGENT_RESULT_WAIT_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 300,
    default: 10,
    description:
      "How long an answered call's terminal event waits after hang-up for the runtime's result (0: it does not wait)",
  }),
  RATE_LIMIT_PER_MINUTE: Positive('Requests per minute per API key', 100),
  AUTH_FAILURES_PER_MINUTE: Positive('Failed authentications per client IP per minute before 429', 30),
  MAX_CONCURRENT_CALLS: Positive('Calls dialling or connected at once, per account', 10),
  MAX_QUEUED_CALLS: Positive('Calls waiting for a slot, per account', 1000),
  QUEUED_CALL_TTL_HOURS: Type.Number({
    exclusiveMinimum: 0,
    default: 24,
    description: 'A call waiting longer fails with reason expired',
  }),
  DISPATCH_ENABLED: Flag('Run the call dispatcher in this process', true),
  DISPATCH_LEASE_MS: Type.Integer({
    minimum: 1000,
    default: 30_000,
    description: 'How long a claimed, not yet dialled call is reserved for its dispatcher',
  }),
  WEBHOOK_DELIVERY_ENABLED: Flag('Run the webhook delivery worker in this process', true),
  WEBHOOK_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 15_000,
    description: 'How long one webhook attempt may take',
  }),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: Flag(
    'Allow http and loopback/private webhook URLs (development and tests only)',
    false,
  ),
  DASHBOARD_SESSION_IDLE_MINUTES: Positive('A dashboard session unused this long ends', 30),
  DASHBOARD_SESSION_MAX_HOURS: Positive('A dashboard session ends this long after sign-in, however active', 12),
  SMTP_URL: Url(
    'SMTP server for e-mailing invitations and sign-in links (smtp://user:pass@host:587 or smtps://…:465); unset = no e-mail',
  ),
  SMTP_FROM: Type.Optional(
    Type.String({
      minLength: 3,
      description: 'From address of those e-mails; default no-reply@ the host of PUBLIC_BASE_URL (else localhost)',
    }),
  ),
  RETENTION_ENABLED: Flag('Run the retention job (deletes rows past their retention) in this process', true),
  RETENTION_INTERVAL_SECONDS: Positive('Seconds between two retention passes', 300),
  RETENTION_BATCH_SIZE: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 1000,
    description: 'Rows one retention statement deletes at most',
  }),
  RETENTION_PAUSE_MS: NonNegative(
    'Least pause between two full batches of a retention pass (the pause is also at least as long as the batch took)',
    100,
  ),
  RETENTION_PASS_MAX_ROWS: Positive(
    'Rows one retention pass deletes at most (cascaded events, deliveries and attempts included) before it yields to the next interval',
    100_000,
  ),
  RETENTION_PASS_MAX_SECONDS: Positive(
    'Seconds one retention pass runs at most before it yields to the next interval',
    60,
  ),
  WEBHOOK_LOG_RETENTION_DAYS: Positive(
    'Days a finished webhook delivery and its attempts are kept after it finished',
    30,
  ),
  CALL_RETENTION_DAYS: Positive('Days a finished call and its events are kept after it ended', 365),
  AUDIT_RETENTION_DAYS: Positive('Days an audit log entry is kept', 365),
  SIMULATED_RING_MS: Type.String({
    minLength: 1,
    default: '1000',
    description: 'How long simulated calls ring (ms); a range such as 1000-3000 gives each call its own ring in it',
  }),
  SIMULATED_TALK_MS: NonNegative('How long simulated calls talk', 5000),
  SIMULATED_DIAL_LOG: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'File that gets one line per simulated dial (tests count dials across restarts)',
    }),
  ),
  SECRETS_KEY: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Key (base64 of 32 bytes) sealing secrets at rest (webhook signing secrets, signing keys); unset = DATA_DIR/secrets.key, generated on first start',
    }),
  ),
  SECRETS_KEY_PREVIOUS: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Earlier SECRETS_KEYs (base64, comma-separated): they open values, never seal (a rotation)',
    }),
  ),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'pino level' },
  ),
  LOG_FORMAT: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')], {
    default: 'auto',
    description:
      'json: one JSON object a line; pretty: readable lines; auto: pretty when stdout is a terminal and NODE_ENV is not production, else json',
  }),
});

type RawConfig = Static<typeof ConfigSchema>;

/** How long a simulated call rings: a fixed time, or a range each attempt draws its own ring from (ms). */
export type SimulatedRing = number | { minMs: number; maxMs: number };

/** SIMULATED_RING_MS: `1000` (every call rings 1 s) or `1000-3000` (each rings between 1 and 3 s); null if neither. */
export function parseSimulatedRing(text: string): SimulatedRing | null {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(text);
  if (!match) return null;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min) return null;
  return max === min ? min : { minMs: min, maxMs: max };
}
export type Config = Omit<RawConfig, 'SIMULATED_RING_MS'> & {
  /** A fixed ring (ms), or the range each simulated call draws its ring from. */
  SIMULATED_RING_MS: SimulatedRing;
  /** DATA_DIR made absolute. */
  dataDir: string;
  trustProxy: boolean;
  /** SMTP_FROM, or no-reply@ the host of PUBLIC_BASE_URL (else localhost). */
  smtpFrom: string;
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function describeProblem(schema: TSchema, value: unknown): string {
  if (KindGuard.IsUnion(schema))
    return `must be one of ${schema.anyOf
      .filter(KindGuard.IsLiteral)
      .map((s) => s.const)
      .join(', ')}`;
  if (schema.type === 'integer' || schema.type === 'number') {
    const bounds = [
      schema.minimum !== undefined ? `>= ${schema.minimum}` : '',
      schema.exclusiveMinimum !== undefined ? `> ${schema.exclusiveMinimum}` : '',
      schema.maximum !== undefined ? `<= ${schema.maximum}` : '',
    ].filter(Boolean);
    return `must be ${schema.type === 'integer' ? 'an integer' : 'a number'}${bounds.length ? ` ${bounds.join(' and ')}` : ''}`;
  }
  if (schema.type === 'boolean') return 'must be true or false';
  if (schema.pattern) return `must match ${schema.pattern}`;
  return `is invalid (${JSON.stringify(value)})`;
}

function parseBoolean(value: string): boolean | string {
  const lowered = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lowered)) return true;
  if (['false', '0', 'no', 'off', ''].includes(lowered)) return false;
  return value;
}

/** Reads the environment (only the variables ConfigSchema names) and returns a validated config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(ConfigSchema.properties) as [string, TSchema][]) {
    const value = env[name];
    // An empty variable means unset, as shells and .env files usually intend.
    if (value === undefined || value === '') continue;
    if (schema.type === 'boolean') raw[name] = parseBoolean(value);
    else if (schema.type === 'integer' || schema.type === 'number')
      raw[name] = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
    else raw[name] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, unknown>;
  const problems: string[] = [];
  for (const error of Value.Errors(ConfigSchema, withDefaults)) {
    const name = error.path.replace(/^\//, '').split('/')[0] ?? error.path;
    const schema = (ConfigSchema.properties as Record<string, TSchema>)[name];
    if (problems.some((p) => p.startsWith(`${name}:`))) continue;
    const shown = /TOKEN|SECRET|URL/.test(name) ? '' : ` (got ${JSON.stringify(env[name])})`;
    problems.push(`${name}: ${schema ? describeProblem(schema, error.value) : error.message}${shown}`);
  }
  const config = withDefaults as RawConfig;
  const ring = parseSimulatedRing(String(config.SIMULATED_RING_MS));
  if (ring === null)
    problems.push(
      `SIMULATED_RING_MS: must be milliseconds (1000) or a range min-max with max >= min (1000-3000) (got ${JSON.stringify(env.SIMULATED_RING_MS)})`,
    );
  if (problems.length === 0) {
    if (config.TLS_MODE === 'files') {
      if (!config.TLS_CERT_FILE) problems.push('TLS_CERT_FILE: is required when TLS_MODE=files');
      if (!config.TLS_KEY_FILE) problems.push('TLS_KEY_FILE: is required when TLS_MODE=files');
    }
    problems.push(...carrierProblems(config));
    for (const name of [
      'DATABASE_URL',
      'REDIS_URL',
      'PUBLIC_BASE_URL',
      'AGENT_STREAM_URL',
      'TWILIO_API_BASE_URL',
      'TELNYX_API_BASE_URL',
      'SIGNALWIRE_API_BASE_URL',
      'SMTP_URL',
    ] as const) {
      const value = config[name];
      if (value !== undefined && !URL.canParse(value)) problems.push(`${name}: is not a valid URL`);
    }
    if (config.SECRETS_KEY !== undefined && !decodeSecretsKey(config.SECRETS_KEY))
      problems.push('SECRETS_KEY: must be the base64 of exactly 32 bytes (openssl rand -base64 32)');
    if (config.SECRETS_KEY_PREVIOUS !== undefined && !decodeSecretsKeyList(config.SECRETS_KEY_PREVIOUS))
      problems.push('SECRETS_KEY_PREVIOUS: must be base64 keys of exactly 32 bytes, separated by commas');
    if (config.SECRETS_KEY_PREVIOUS !== undefined && config.SECRETS_KEY === undefined)
      problems.push('SECRETS_KEY_PREVIOUS: needs SECRETS_KEY (the key that seals) beside it');
    // An e-mailed link is built on PUBLIC_BASE_URL, never on a request's Host header (which a stranger asking for a
    // reset link could set to their own site).
    if (config.SMTP_URL && !config.PUBLIC_BASE_URL)
      problems.push('PUBLIC_BASE_URL: is required when SMTP_URL is set (e-mailed links are built on it)');
    if (
      config.SMTP_URL &&
      URL.canParse(config.SMTP_URL) &&
      !['smtp:', 'smtps:'].includes(new URL(config.SMTP_URL).protocol)
    ) {
      problems.push('SMTP_URL: must start with smtp:// or smtps://');
    }
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return {
    ...config,
    SIMULATED_RING_MS: ring!,
    dataDir: path.resolve(config.DATA_DIR),
    trustProxy: config.TRUST_PROXY || config.TLS_MODE === 'proxy',
    smtpFrom:
      config.SMTP_FROM ?? `no-reply@${config.PUBLIC_BASE_URL ? new URL(config.PUBLIC_BASE_URL).hostname : 'localhost'}`,
  };
}
