// The API credential: the service's base URL and an API key, sent as `Authorization: Bearer <key>`.
import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/**
 * The service has no read-only route an API key can call (its public API is the trigger alone, and its health
 * checks live on an internal listener without auth). So the test posts an empty body to the trigger: the key is
 * checked before the body (401 or 403 with the server's message), and an empty body is then refused (400) before
 * anything is stored. A 400 therefore means "this key may trigger calls"; no call is placed.
 */
export class OutboundCallTriggerApi implements ICredentialType {
	name = 'outboundCallTriggerApi';

	displayName = 'Outbound Call Trigger API';

	icon: Icon = {
		light: 'file:../icons/outbound-call-trigger.svg',
		dark: 'file:../icons/outbound-call-trigger.dark.svg',
	};

	documentationUrl =
		'https://github.com/outbound-call-trigger/outbound-call-trigger/blob/main/docs/integrations.md#n8n';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			placeholder: 'https://calls.example.com',
			description: 'Where the service answers, without /api/v1 (HTTPS)',
			required: true,
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'An API key from the dashboard (Settings → API & Webhooks); it starts with svc_sk_',
			required: true,
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/api/v1/calls/trigger',
			method: 'POST',
			body: {},
			json: true,
			ignoreHttpStatusErrors: true,
		},
		rules: [
			...['Invalid API key', 'API access is disabled', 'API access requires the agency plan'].map(
				(message) => ({
					type: 'responseSuccessBody' as const,
					properties: { key: 'error', value: message, message },
				}),
			),
			{
				type: 'responseSuccessBody',
				properties: {
					key: 'error',
					value: 'HTTPS is required',
					message: 'HTTPS is required: use an https:// base URL',
				},
			},
			{
				// Every answer of the service, success or error, carries `success`: anything else is another server.
				type: 'responseSuccessBody',
				properties: {
					key: 'success',
					value: undefined,
					message: 'This base URL does not answer as the Outbound Call Trigger API',
				},
			},
		],
	};
}
