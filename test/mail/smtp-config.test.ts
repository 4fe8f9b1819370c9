// SMTP settings: SMTP_URL needs PUBLIC_BASE_URL (e-mailed links are never built on a request's Host header) and an
// smtp:// or smtps:// scheme; the From address defaults to no-reply@ PUBLIC_BASE_URL's host; the URL is never echoed.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('SMTP configuration', () => {
  it('is off by default', () => {
    expect(loadConfig({}).SMTP_URL).toBeUndefined();
  });

  it('needs PUBLIC_BASE_URL, and an smtp or smtps URL, and never prints the URL (it holds a password)', () => {
    expect(() => loadConfig({ SMTP_URL: 'smtp://u:hunter2@mail.example.com:587' })).toThrow(
      /PUBLIC_BASE_URL: is required when SMTP_URL is set/,
    );
    let error: unknown;
    try {
      loadConfig({ SMTP_URL: 'http://u:hunter2@mail.example.com', PUBLIC_BASE_URL: 'https://calls.example.com' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('SMTP_URL: must start with smtp:// or smtps://');
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('sends from SMTP_FROM, else no-reply@ the public host', () => {
    const base = { SMTP_URL: 'smtps://u:p@mail.example.com:465', PUBLIC_BASE_URL: 'https://calls.example.com/' };
    expect(loadConfig(base).smtpFrom).toBe('no-reply@calls.example.com');
    expect(loadConfig({ ...base, SMTP_FROM: 'Calls <calls@example.com>' }).smtpFrom).toBe('Calls <calls@example.com>');
  });
});
