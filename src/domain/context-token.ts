// The voice-agent runtime's context token (docs/agent-runtime.md): what a runtime presents to read a call's context
// and post its result. Signed by the service (HMAC-SHA256 with a key of its own), bound to one call and one attempt,
// and short-lived: it names when it was issued, and the routes refuse it once the call has been over for
// CONTEXT_TOKEN_GRACE_MINUTES (the ended call is the database's to say, not the token's).
//
//   oct1.<base64url: call id (16 bytes) | attempt (uint16) | issued at (uint32, Unix seconds)>.<base64url: HMAC>
//
// 4 + 1 + 30 + 1 + 43 = 79 characters: it fits a stream parameter (Twilio: 500) and a SIP header with room to spare.
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'oct1';
const PAYLOAD_BYTES = 16 + 2 + 4;
/** No call lives longer than this (Twilio ends calls at 4 hours): a token older is refused whatever the call says. */
export const CONTEXT_TOKEN_MAX_AGE_SECONDS = 6 * 3600;

export interface ContextClaims {
  callId: string;
  attempt: number;
  /** When it was issued (whole seconds). */
  issuedAt: Date;
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest();
}

/** A token for the call's attempt, issued at `now`. */
export function signContextToken(key: Buffer, claims: { callId: string; attempt: number; now: Date }): string {
  const payload = Buffer.alloc(PAYLOAD_BYTES);
  Buffer.from(claims.callId.replace(/-/g, ''), 'hex').copy(payload, 0);
  payload.writeUInt16BE(claims.attempt, 16);
  payload.writeUInt32BE(Math.floor(claims.now.getTime() / 1000), 18);
  const text = payload.toString('base64url');
  return `${PREFIX}.${text}.${mac(key, text).toString('base64url')}`;
}

/**
 * The claims of a token this key signed, or null: malformed, another key's, tampered with, issued in the future or
 * older than CONTEXT_TOKEN_MAX_AGE_SECONDS. Whether it is for the call asked about, and the call's attempt, is the
 * caller's to check.
 */
export function verifyContextToken(key: Buffer, token: string, now: Date): ContextClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) return null;
  const [, text, signature] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]{30}$/.test(text) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return null;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(key, text);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const payload = Buffer.from(text, 'base64url');
  if (payload.length !== PAYLOAD_BYTES) return null;
  const hex = payload.subarray(0, 16).toString('hex');
  const callId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const issuedAt = new Date(payload.readUInt32BE(18) * 1000);
  const age = (now.getTime() - issuedAt.getTime()) / 1000;
  // A minute of clock skew between replicas is allowed.
  if (age < -60 || age > CONTEXT_TOKEN_MAX_AGE_SECONDS) return null;
  return { callId, attempt: payload.readUInt16BE(16), issuedAt };
}
