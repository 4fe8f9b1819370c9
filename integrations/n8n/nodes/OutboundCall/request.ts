// From the node's parameters to the trigger's request: the JSON body and the Idempotency-Key it is sent with.
import { createHash } from 'node:crypto';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import type { IdempotencyMode } from './fields';

export interface TriggerRequest {
	body: IDataObject;
	/** The Idempotency-Key header, or undefined when none is sent. */
	idempotencyKey: string | undefined;
}

const text = (value: unknown): string | undefined => {
	if (value === undefined || value === null) return undefined;
	const string = String(value);
	return string === '' ? undefined : string;
};

/** A Luxon DateTime or Date from an expression as RFC 3339 (Luxon's toString is its ISO form, offset included). */
const dateTime = (value: unknown): string | undefined =>
	value instanceof Date ? value.toISOString() : text(value);

function metadataOf(
	context: IExecuteFunctions,
	value: unknown,
	itemIndex: number,
): IDataObject | undefined {
	let parsed: unknown = value;
	if (typeof value === 'string') {
		if (value.trim() === '') return undefined;
		try {
			parsed = JSON.parse(value);
		} catch {
			throw new NodeOperationError(context.getNode(), 'Metadata must be a JSON object', {
				itemIndex,
			});
		}
	}
	if (parsed === undefined || parsed === null) return undefined;
	if (typeof parsed !== 'object' || Array.isArray(parsed)) {
		throw new NodeOperationError(context.getNode(), 'Metadata must be a JSON object', {
			itemIndex,
		});
	}
	return Object.keys(parsed).length > 0 ? (parsed as IDataObject) : undefined;
}

/** The Consent sub-fields as the schema's object, in its order; undefined when the node has none. */
function consentOf(value: unknown): IDataObject | undefined {
	const record = (value as IDataObject | undefined)?.record as IDataObject | undefined;
	if (record === undefined || record === null) return undefined;
	const consent = given({
		type: text(record.type),
		obtained_at: dateTime(record.obtainedAt),
		source: text(record.source),
		evidence_url: text(record.evidenceUrl),
	});
	return Object.keys(consent).length > 0 ? consent : undefined;
}

/** The entries of `candidates` that hold a value: a field left empty is not sent. */
function given(candidates: IDataObject): IDataObject {
	const sent: IDataObject = {};
	for (const [field, value] of Object.entries(candidates))
		if (value !== undefined) sent[field] = value;
	return sent;
}

/** "n8n-" and the SHA-256 of the parts: printable ASCII, 68 characters, whatever the node name or body hold. */
const digest = (parts: string[]): string =>
	`n8n-${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}`;

export function buildTriggerRequest(context: IExecuteFunctions, itemIndex: number): TriggerRequest {
	const fields = context.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const body = given({
		phone_number: text(context.getNodeParameter('phoneNumber', itemIndex)),
		agent_id: text(fields.agentId),
		name: text(fields.name),
		email: text(fields.email),
		metadata: metadataOf(context, fields.metadata, itemIndex),
		scheduled_at: dateTime(fields.scheduledAt),
		recipient_timezone: text(fields.recipientTimezone),
		recipient_region: text(fields.recipientRegion),
		consent: consentOf(fields.consent),
	});

	const mode = context.getNodeParameter(
		'idempotencyKeyMode',
		itemIndex,
		'executionAndItem',
	) as IdempotencyMode;
	const workflowId = String(context.getWorkflow().id ?? '');
	const nodeName = context.getNode().name;
	const bodyText = JSON.stringify(body);
	let idempotencyKey: string | undefined;
	if (mode === 'executionAndItem') {
		// The body is part of it: a node inside a loop sees item 0 once per round, each round a different lead.
		idempotencyKey = digest([
			workflowId,
			context.getExecutionId(),
			nodeName,
			String(itemIndex),
			bodyText,
		]);
	} else if (mode === 'itemContent') {
		idempotencyKey = digest([workflowId, nodeName, bodyText]);
	} else if (mode === 'custom') {
		idempotencyKey = text(context.getNodeParameter('idempotencyKey', itemIndex));
		if (!idempotencyKey) {
			throw new NodeOperationError(context.getNode(), 'The custom Idempotency Key is empty', {
				itemIndex,
			});
		}
	}
	return { body, idempotencyKey };
}
