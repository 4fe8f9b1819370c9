// The dashboard's agent and invite schemas state the rules the domain applies, no stricter: every value the domain
// accepts (callctl's calling windows, an E.164 number, a user's address) the schema accepts too, and what the schema
// refuses the domain refuses, so the page can word a refused field next to it.
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { agentInputProblem } from '../../src/admin/agents.js';
import {
  normalizeVoicemailMessage,
  parseMaxAttempts,
  parseRetryOn,
  parseRetryWaits,
  voicemailMessageProblem,
} from '../../src/domain/agent-settings.js';
import { parseCallingWindow } from '../../src/domain/calling-window.js';
import { E164_PATTERN, isValidE164 } from '../../src/domain/phone-number.js';
import { parseTypedNumber } from '../../src/domain/typed-phone-number.js';
import { isPlausibleEmail } from '../../src/domain/user-email.js';
import { DAY_NAMES } from '../../schemas/calling-window.js';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX } from '../../schemas/agent-settings.js';
import { AgentForm, E164 } from '../../schemas/dashboard/agents.js';
import { MAX_ATTEMPTS, RETRYABLE_OUTCOMES } from '../../schemas/vocabulary.js';
import { InviteUserForm } from '../../schemas/dashboard/people.js';

const agent = { _csrf: 'token', name: 'Agent', phone: '', timezone: 'UTC', policy: 'queue' };
const accepts = (fields: Record<string, unknown>) => Value.Check(AgentForm, { ...agent, ...fields });
/** Whether `read` takes the value without throwing. */
const reads = (read: () => unknown) => {
  try {
    read();
    return true;
  } catch {
    return false;
  }
};
const parses = (window: string) => reads(() => parseCallingWindow(window));

describe('agent form schema', () => {
  it('states the times the domain reads: HH:MM from 00:00 to 23:59, and 24:00 as an end only', () => {
    const times = ['9:00', '09:0', '009:00', '09.00', '09:00:00', 'noon', '', ' 09:00 ', '\t17:30'];
    for (let h = 0; h < 100; h++)
      for (let m = 0; m < 100; m++) times.push(`${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
    for (const time of times) {
      const t = time.trim();
      // An empty time is an unused row's (or the domain's "a row needs both" refusal): the schema lets it through.
      const opens = t === '' || parses(`daily ${t}-24:00`);
      const closes = t === '' || parses(`daily ${t === '12:00' ? '13:00' : '12:00'}-${t}`);
      expect(accepts({ window_from: time }), `from ${JSON.stringify(time)}`).toBe(opens);
      expect(accepts({ window_to: time }), `to ${JSON.stringify(time)}`).toBe(closes);
      expect(accepts({ window_from: ['10:00', time] }), `second row from ${JSON.stringify(time)}`).toBe(opens);
    }
    expect(accepts({ window_to: '24:00' })).toBe(true);
    expect(accepts({ window_from: '24:00' })).toBe(false);
  });

  it('states the day boxes the page sends: "<row>:<day>", one field per ticked box, each a day the domain reads', () => {
    for (const day of DAY_NAMES) {
      // The box's day is one the domain reads as a window's days.
      expect(parses(`${day} 09:00-17:00`), day).toBe(true);
      expect(accepts({ window_day: `0:${day}` }), day).toBe(true);
      expect(accepts({ window_day: [`0:${day}`, `12:${day}`] }), day).toBe(true);
    }
    for (const odd of ['mon', '0:', ':mon', '0:monday', '0:daily', '0:mon-fri', '100:mon', 'a:mon', '0:xyz'])
      expect(accepts({ window_day: odd }), odd).toBe(false);
    expect(accepts({ window_day: [] })).toBe(true);
    // The CLI's day words are no field of the form.
    expect(accepts({ window_days: 'mon-fri' })).toBe(false);
  });

  it('states the buttons: save, add a window, or remove row n', () => {
    for (const action of ['save', 'add-window', 'remove-window-0', 'remove-window-19'])
      expect(accepts({ action }), action).toBe(true);
    for (const action of ['delete', 'remove-window-', 'remove-window-100', 'add-window '])
      expect(accepts({ action }), action).toBe(false);
  });

  it('states the characters of a typed number, and refuses nothing the domain reads as a number', () => {
    expect(`^${E164}$`).toBe(E164_PATTERN.source);
    const typed = ['+14155552671', '+442071838750', ' +14155552671 ', '', '+1 415 555 2671', '(415) 555-2671'];
    typed.push('415.555.2671', '011 44 20 7183 8750', '+44 (0)20 7183 8750', '415/555-2671', '14155552671');
    for (const phone of typed) {
      expect(accepts({ phone }), phone).toBe(true);
      if (phone) expect('e164' in parseTypedNumber(phone, 'US'), phone).toBe(true);
    }
    // What the schema refuses, the domain does not read either (so the page words it next to the field).
    for (const phone of [
      '1-800-FLOWERS',
      '+１４１５５５５２６７１',
      '415 555 2671 ext 5',
      '+1\u0000415',
      'x'.repeat(101),
    ]) {
      expect(accepts({ phone }), phone).toBe(false);
      expect(parseTypedNumber(phone, 'US'), phone).toEqual({ problem: 'unreadable' });
    }
    for (const phone of ['+14155552671', '+442071838750']) expect(isValidE164(phone)).toBe(true);
  });

  it('states a time zone that is not blank, and an account that is empty or an id', () => {
    expect(accepts({ timezone: 'Europe/Berlin' })).toBe(true);
    expect(accepts({ timezone: '  ' })).toBe(false);
    expect(accepts({ timezone: '' })).toBe(false);
    expect(agentInputProblem({ timezone: '' })).toMatch(/time zone/);
    expect(accepts({ account: '' })).toBe(true);
    expect(accepts({ account: '0B7F3C9E-5D1A-4C2B-9A8E-6F4D2C1B0A9E' })).toBe(true);
    expect(accepts({ account: 'not-an-id' })).toBe(false);
  });
});

describe('agent form schema: retries and voicemail', () => {
  it(`states the attempts the domain reads: a whole number from 1 to ${MAX_ATTEMPTS}`, () => {
    const candidates = ['', ' ', 'x', '1.0', '-1', '+2', '05', '1e0', ' 3 ', '\t2', '１'];
    for (let n = 0; n <= 20; n++) candidates.push(String(n));
    for (const attempts of candidates) {
      const domain = reads(() => parseMaxAttempts(attempts));
      expect(accepts({ max_attempts: attempts }), JSON.stringify(attempts)).toBe(domain);
    }
    expect(accepts({ max_attempts: String(MAX_ATTEMPTS) })).toBe(true);
    expect(accepts({ max_attempts: String(MAX_ATTEMPTS + 1) })).toBe(false);
  });

  it('states the outcomes the domain retries, never rejected, one per ticked box', () => {
    const words = [...RETRYABLE_OUTCOMES, 'rejected', 'completed', 'provider_error', 'BUSY', 'no-answer', 'none'];
    const candidates = [...words, '', ' busy ', 'busy,no_answer', 'busy no_answer'];
    for (const outcome of candidates) {
      const domain = reads(() => parseRetryOn([outcome]));
      expect(accepts({ retry_on: outcome }), JSON.stringify(outcome)).toBe(domain);
      expect(accepts({ retry_on: ['busy', outcome] }), `second box ${JSON.stringify(outcome)}`).toBe(domain);
    }
    expect(accepts({ retry_on: [...RETRYABLE_OUTCOMES] })).toBe(true);
    expect(agentInputProblem({ retryOn: ['rejected'] })).toMatch(/rejected is never retried/);
  });

  it(`states the waits the domain reads: 1 to ${RETRY_WAITS_MAX} whole minutes, each at most ${RETRY_WAIT_MAX_MINUTES}`, () => {
    // The schema's number pattern is written out for 10080 (7 days): it fails here if the bound moves alone.
    expect(RETRY_WAIT_MAX_MINUTES).toBe(10_080);
    for (let n = 0; n <= 20_000; n++) {
      const text = String(n);
      expect(accepts({ retry_waits_minutes: text }), text).toBe(reads(() => parseRetryWaits(text)));
    }
    const candidates = [
      '',
      ' ',
      '30, 120, 1440',
      '30,120,1440',
      ' 30 ,120 , 1440 ',
      '30 120 1440',
      '30  120',
      '30\t120',
      '30, 120, 1440, 2880',
      '30,,120',
      ',30',
      '30,',
      '030',
      '30;120',
      '1.5',
      '-30',
      '10080, 10081',
      '10080,1,1',
      'thirty',
      '30 min',
    ];
    for (const waits of candidates) {
      const domain = reads(() => parseRetryWaits(waits));
      expect(accepts({ retry_waits_minutes: waits }), JSON.stringify(waits)).toBe(domain);
    }
  });

  it('refuses in the schema only voicemail messages the domain refuses: control characters but line breaks', () => {
    for (let code = 0; code <= 0xa0; code++) {
      const message = `Hello ${String.fromCharCode(code)} {{name}}`;
      const normalized = normalizeVoicemailMessage(message);
      const domain = normalized === null || voicemailMessageProblem(normalized) === null;
      expect(accepts({ voicemail_message: message }), `U+${code.toString(16).padStart(4, '0')}`).toBe(domain);
    }
    // What only the domain checks (the schema states it in words): the length after CRLF becomes LF, the placeholder.
    const long = 'x'.repeat(499);
    expect(voicemailMessageProblem(normalizeVoicemailMessage(`${long}\r\ny`)!)).toMatch(/at most 500/);
    expect(voicemailMessageProblem(normalizeVoicemailMessage(`${'x'.repeat(498)}\r\ny`)!)).toBeNull();
    expect(voicemailMessageProblem('📞'.repeat(500))).toBeNull();
    expect(voicemailMessageProblem('Hi {{first_name}}')).toMatch(/\{\{name\}\} .*not "\{\{first_name\}\}"/);
    expect(accepts({ voicemail_message: 'Hi {{first_name}}' })).toBe(true);
    // As the message is spoken (src/domain/voicemail.ts): blanks inside the braces are tolerated, the case is not.
    expect(voicemailMessageProblem('Hi {{ name }}, and {{name}}')).toBeNull();
    expect(voicemailMessageProblem('Hi {{Name}}')).toMatch(/not "\{\{Name\}\}"/);
  });

  it('offers the vocabulary as choices for voicemail and whose time the windows are read in', () => {
    for (const voicemail of ['off', 'hang_up', 'leave_message']) expect(accepts({ voicemail })).toBe(true);
    for (const zone of ['agent', 'recipient']) expect(accepts({ window_timezone: zone })).toBe(true);
    expect(accepts({ voicemail: 'hangup' })).toBe(false);
    expect(accepts({ window_timezone: 'callee' })).toBe(false);
  });
});

describe('invite form schema', () => {
  it("states the address shape src/admin checks (callctl's), not a stricter one", () => {
    const invite = (email: string) =>
      Value.Check(InviteUserForm, { _csrf: 'token', email, account: '0b7f3c9e-5d1a-4c2b-9a8e-6f4d2c1b0a9e' });
    const addresses = [
      'a@b.co',
      'New.Person@Beta.example',
      ' spaced@beta.example ',
      'josé@exämple.de',
      'a..b@x.example',
      'a@b.c',
      'not an email',
      'a@b',
      '@x.example',
      'a@.example',
      'a@@b.example',
      '',
      'a@b.example\n',
    ];
    for (const email of addresses) expect(invite(email), JSON.stringify(email)).toBe(isPlausibleEmail(email));
  });
});
