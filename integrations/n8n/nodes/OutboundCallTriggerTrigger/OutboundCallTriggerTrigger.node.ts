// "Outbound Call Trigger: On call event": starts a workflow on call.started, call.completed or call.failed, once the
// delivery's Standard Webhooks signature and timestamp check out; anything else is refused and runs nothing.
import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IHookFunctions,
	INodeCredentialTestResult,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';
import { signingKey, verifyDelivery, type Verdict } from './signature';

const EVENTS = ['call.started', 'call.completed', 'call.failed'] as const;

const header = (value: string | string[] | undefined): string | undefined =>
	Array.isArray(value) ? value[0] : value;

/** Answers the sender itself and starts no execution. */
function refuse(
	context: IWebhookFunctions,
	verdict: Exclude<Verdict, { ok: true }>,
): IWebhookResponseData {
	context
		.getResponseObject()
		.status(verdict.status)
		.json({ success: false, error: verdict.reason });
	return { noWebhookResponse: true };
}

export class OutboundCallTriggerTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Outbound Call Trigger: Call Event Trigger',
		name: 'outboundCallTriggerTrigger',
		icon: {
			light: 'file:../../icons/outbound-call-trigger.svg',
			dark: 'file:../../icons/outbound-call-trigger.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description:
			'Starts the workflow when Outbound Call Trigger sends a signed call event (Standard Webhooks)',
		defaults: { name: 'On call event' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'outboundCallTriggerWebhookApi',
				required: true,
				testedBy: 'outboundCallTriggerWebhookSecretTest',
			},
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'webhook',
			},
		],
		properties: [
			{
				displayName:
					"Paste this node's Production URL into the dashboard (Settings → API & Webhooks) as the webhook URL, and the signing secret shown there into this node's credential",
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				default: [...EVENTS],
				description:
					'The events that start the workflow; other signed events are acknowledged (200) without a run',
				options: [
					{ name: 'Call Started', value: 'call.started', description: 'Dialling began' },
					{
						name: 'Call Completed',
						value: 'call.completed',
						description: 'The call was answered and has ended',
					},
					{
						name: 'Call Failed',
						value: 'call.failed',
						description: 'The call ended without completing (data.failure_reason says why)',
					},
				],
			},
		],
	};

	methods = {
		credentialTest: {
			/** No request can prove a signing secret: this checks its form, the mistake that can be caught early. */
			async outboundCallTriggerWebhookSecretTest(
				this: ICredentialTestFunctions,
				credential: ICredentialsDecrypted,
			): Promise<INodeCredentialTestResult> {
				const key = signingKey(String(credential.data?.signingSecret ?? ''));
				return typeof key === 'string'
					? { status: 'Error', message: key }
					: { status: 'OK', message: 'The signing secret is well formed' };
			},
		},
	};

	// The service has no API to register a webhook: its URL is set in the dashboard, once per account. So there is
	// nothing to create or delete remotely, and nothing to check.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const credentials = await this.getCredentials<{ signingSecret: string }>(
			'outboundCallTriggerWebhookApi',
		);
		const key = signingKey(credentials.signingSecret);
		if (typeof key === 'string') {
			// The node's own configuration is wrong: refuse the delivery (the service retries it later).
			return refuse(this, {
				ok: false,
				status: 401,
				reason: 'The receiver cannot verify signatures',
			});
		}
		const request = this.getRequestObject();
		if (!Buffer.isBuffer(request.rawBody) && typeof request.readRawBody === 'function') {
			await request.readRawBody();
		}
		if (!Buffer.isBuffer(request.rawBody)) {
			return refuse(this, { ok: false, status: 400, reason: 'The request body could not be read' });
		}
		const headers = this.getHeaderData();
		const verdict = verifyDelivery(
			{
				id: header(headers['webhook-id']),
				timestamp: header(headers['webhook-timestamp']),
				signature: header(headers['webhook-signature']),
				body: request.rawBody,
			},
			key,
			Math.floor(Date.now() / 1000),
		);
		if (!verdict.ok) return refuse(this, verdict);

		let event: IDataObject;
		try {
			event = JSON.parse(request.rawBody.toString('utf8')) as IDataObject;
		} catch {
			return refuse(this, { ok: false, status: 400, reason: 'The body is not JSON' });
		}
		const events = this.getNodeParameter('events', []) as string[];
		if (typeof event.type !== 'string' || !events.includes(event.type)) {
			return { webhookResponse: { received: true, ignored: true } };
		}
		// webhook-id is the same on every retry of one event: a workflow can drop duplicates by it.
		return {
			workflowData: [[{ json: { webhook_id: header(headers['webhook-id']) ?? null, ...event } }]],
		};
	}
}
