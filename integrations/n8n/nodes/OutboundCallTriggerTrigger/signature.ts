// Standard Webhooks verification (webhook-id, webhook-timestamp, webhook-signature) with node:crypto. n8n Cloud
// allows community nodes no runtime dependencies, so the reference library (standardwebhooks) is only a dev
// dependency: the project's tests check that both accept and refuse the same deliveries.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a delivery's timestamp may be from now, either way (the reference library's tolerance). */
export const TOLERANCE_SECONDS = 5 * 60;

const SECRET_PREFIX = 'whsec_';
// Buffer.from(x, 'base64') skips invalid characters: a mistyped secret would give another key, not an error.
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/**
 * The HMAC key of a `whsec_` secret (its base64 decoded), or a sentence saying what is wrong with it. Standard
 * Webhooks keys are 24 to 64 bytes.
 */
export function signingKey(secret: string): Buffer | string {
	const trimmed = secret.trim();
	if (!trimmed.startsWith(SECRET_PREFIX))
		return `The signing secret must start with ${SECRET_PREFIX}`;
	const encoded = trimmed.slice(SECRET_PREFIX.length);
	if (encoded.length > Math.ceil(MAX_KEY_BYTES / 3) * 4 || !STANDARD_BASE64.test(encoded)) {
		return `The signing secret must be ${SECRET_PREFIX} followed by standard base64`;
	}
	const key = Buffer.from(encoded, 'base64');
	if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
		return `The signing secret's key must be ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`;
	}
	return key;
}

export interface Delivery {
	/** The three Standard Webhooks headers as received (undefined when absent). */
	id: string | undefined;
	timestamp: string | undefined;
	signature: string | undefined;
	/** The body's bytes exactly as received: a re-serialized body would not match its signature. */
	body: Buffer;
}

export type Verdict = { ok: true } | { ok: false; status: 400 | 401; reason: string };

const refuse = (status: 400 | 401, reason: string): Verdict => ({ ok: false, status, reason });

/** Checks a delivery's signature and freshness against `key` at `nowSeconds` (Unix time). */
export function verifyDelivery(delivery: Delivery, key: Buffer, nowSeconds: number): Verdict {
	const { id, timestamp, signature, body } = delivery;
	if (!id || !timestamp || !signature) {
		return refuse(401, 'Missing webhook-id, webhook-timestamp or webhook-signature header');
	}
	if (!/^\d{1,15}$/.test(timestamp)) return refuse(400, 'webhook-timestamp must be Unix seconds');
	const sentAt = Number(timestamp);
	if (Math.abs(nowSeconds - sentAt) > TOLERANCE_SECONDS) {
		return refuse(401, `webhook-timestamp is more than ${TOLERANCE_SECONDS / 60} minutes from now`);
	}
	const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
	// The header lists one or more "v1,<base64>" signatures separated by spaces (several while a secret rotates).
	for (const versioned of signature.split(' ')) {
		const [version, encoded] = versioned.split(',', 2);
		if (version !== 'v1' || !encoded) continue;
		const given = Buffer.from(encoded, 'base64');
		if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
	}
	return refuse(401, 'No webhook-signature matches the body signed with the signing secret');
}
