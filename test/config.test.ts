// Configuration: every variable of the README's configuration table is read, defaults apply, and a bad value stops the start with its name.
import { describe, expect, it } from 'vitest';
import { ConfigError, ConfigSchema, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8443,
      HOST: '0.0.0.0',
      INTERNAL_PORT: 9464,
      INTERNAL_HOST: '127.0.0.1',
      DATA_DIR: '.data',
      TLS_MODE: 'self-signed',
      TRUST_PROXY: false,
      DIALER: 'simulated',
      RATE_LIMIT_PER_MINUTE: 100,
      MAX_CONCURRENT_CALLS: 10,
      MAX_QUEUED_CALLS: 1000,
      QUEUED_CALL_TTL_HOURS: 24,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      SIMULATED_RING_MS: 1000,
      SIMULATED_TALK_MS: 5000,
      LOG_LEVEL: 'info',
      trustProxy: false,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('reads every variable of the configuration table', () => {
    const names = Object.keys(ConfigSchema.properties);
    for (const name of [
      'PORT',
      'HOST',
      'INTERNAL_PORT',
      'INTERNAL_HOST',
      'DATA_DIR',
      'DATABASE_URL',
      'REDIS_URL',
      'TLS_MODE',
      'TLS_CERT_FILE',
      'TLS_KEY_FILE',
      'TRUST_PROXY',
      'DIALER',
      'TWILIO_ACCOUNT_SID',
      'TWILIO_AUTH_TOKEN',
      'PUBLIC_BASE_URL',
      'AGENT_STREAM_URL',
      'RATE_LIMIT_PER_MINUTE',
      'MAX_CONCURRENT_CALLS',
      'MAX_QUEUED_CALLS',
      'QUEUED_CALL_TTL_HOURS',
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      'SIMULATED_RING_MS',
      'SIMULATED_TALK_MS',
      'LOG_LEVEL',
    ])
      expect(names).toContain(name);
  });

  it('converts numbers and booleans', () => {
    const config = loadConfig({
      PORT: '9000',
      TRUST_PROXY: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      QUEUED_CALL_TTL_HOURS: '0.5',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(config).toMatchObject({
      PORT: 9000,
      TRUST_PROXY: true,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
      QUEUED_CALL_TTL_HOURS: 0.5,
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
  });

  it('binds the internal listener to INTERNAL_HOST, loopback unless set, whatever HOST is', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }).INTERNAL_HOST).toBe('127.0.0.1');
    expect(loadConfig({ INTERNAL_HOST: '0.0.0.0' }).INTERNAL_HOST).toBe('0.0.0.0');
    expect(loadConfig({ INTERNAL_HOST: '' }).INTERNAL_HOST).toBe('127.0.0.1');
  });

  it('implies TRUST_PROXY in proxy mode', () => {
    expect(loadConfig({ TLS_MODE: 'proxy' }).trustProxy).toBe(true);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT: must be an integer >= 1 and <= 65535 \(got "abc"\)/],
    [{ PORT: '70000' }, /PORT: must be an integer/],
    [{ INTERNAL_PORT: '1.5' }, /INTERNAL_PORT: must be an integer/],
    [{ TLS_MODE: 'none' }, /TLS_MODE: must be one of self-signed, files, proxy/],
    [{ TLS_MODE: 'files' }, /TLS_CERT_FILE: is required when TLS_MODE=files[\s\S]*TLS_KEY_FILE: is required/],
    [{ DIALER: 'twilio' }, /TWILIO_ACCOUNT_SID: is required when DIALER=twilio/],
    [{ TRUST_PROXY: 'maybe' }, /TRUST_PROXY: must be true or false/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /RATE_LIMIT_PER_MINUTE: must be an integer >= 1/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL: must be one of fatal, error/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL: is not a valid URL/],
    [{ QUEUED_CALL_TTL_HOURS: '0' }, /QUEUED_CALL_TTL_HOURS: must be a number > 0/],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reports every bad variable at once, and never echoes a secret', () => {
    let error: Error | undefined;
    try {
      loadConfig({
        PORT: 'x',
        MAX_QUEUED_CALLS: '-1',
        TWILIO_ACCOUNT_SID: 'secret-sid',
        DATABASE_URL: 'postgres://u:hunter2@',
      });
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).toMatch(/PORT/);
    expect(error?.message).toMatch(/MAX_QUEUED_CALLS/);
    expect(error?.message).toMatch(/TWILIO_ACCOUNT_SID/);
    expect(error?.message).not.toMatch(/hunter2/);
  });
});
