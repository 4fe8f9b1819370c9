// "Outbound Call Trigger": the action "Trigger a call" (POST /api/v1/calls/trigger), one request per input item.
import type {
	IDataObject,
	IExecuteFunctions,
	IN8nHttpFullResponse,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';
import { properties } from './fields';
import { buildTriggerRequest } from './request';

const CREDENTIAL = 'outboundCallTriggerApi';

export class OutboundCall implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Outbound Call Trigger',
		name: 'outboundCall',
		icon: {
			light: 'file:../../icons/outbound-call-trigger.svg',
			dark: 'file:../../icons/outbound-call-trigger.dark.svg',
		},
		group: ['output'],
		version: 1,
		subtitle: '={{$parameter["operation"] === "trigger" ? "Trigger a call" : ""}}',
		description: 'Trigger outbound voice-agent calls with Outbound Call Trigger',
		defaults: { name: 'Outbound Call Trigger' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		credentials: [{ name: CREDENTIAL, required: true }],
		properties,
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const returned: INodeExecutionData[] = [];
		const { baseUrl } = await this.getCredentials<{ baseUrl: string }>(CREDENTIAL);
		const url = `${baseUrl.replace(/\/+$/, '')}/api/v1/calls/trigger`;

		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				const { body, idempotencyKey } = buildTriggerRequest(this, itemIndex);
				let response: IN8nHttpFullResponse;
				try {
					response = (await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL, {
						method: 'POST',
						url,
						body,
						json: true,
						headers: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {},
						returnFullResponse: true,
						// The service's error envelope carries the reason; it is read below.
						ignoreHttpStatusErrors: true,
					})) as IN8nHttpFullResponse;
				} catch (error) {
					// No answer at all (DNS, refused connection, TLS, timeout).
					throw new NodeApiError(this.getNode(), error as JsonObject, { itemIndex });
				}
				const answer = (response.body ?? {}) as IDataObject;
				if (response.statusCode < 200 || response.statusCode > 299) {
					const message =
						typeof answer.error === 'string' ? answer.error : `HTTP ${response.statusCode}`;
					throw new NodeApiError(this.getNode(), answer as JsonObject, {
						message,
						description: retryHint(response),
						httpCode: String(response.statusCode),
						itemIndex,
					});
				}
				returned.push({
					json: {
						...answer,
						idempotency_key: idempotencyKey ?? null,
						idempotent_replayed: headerOf(response, 'idempotent-replayed') === 'true',
					},
					pairedItem: { item: itemIndex },
				});
			} catch (error) {
				if (this.continueOnFail()) {
					returned.push({
						json: { error: (error as Error).message },
						pairedItem: { item: itemIndex },
					});
					continue;
				}
				throw error instanceof NodeApiError || error instanceof NodeOperationError
					? error
					: new NodeOperationError(this.getNode(), error as Error, { itemIndex });
			}
		}
		return [returned];
	}
}

function headerOf(response: IN8nHttpFullResponse, name: string): string | undefined {
	const value = (response.headers as Record<string, unknown> | undefined)?.[name];
	return typeof value === 'string' ? value : undefined;
}

/** 429 and 503 say when to come back; with the same key a retry cannot call twice. */
function retryHint(response: IN8nHttpFullResponse): string | undefined {
	const retryAfter = headerOf(response, 'retry-after');
	return retryAfter
		? `Retry after ${retryAfter} seconds (Retry On Fail in the node's settings keeps the same Idempotency-Key)`
		: undefined;
}
