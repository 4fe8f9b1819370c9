// The "Trigger a call" action's parameters: every field of POST /api/v1/calls/trigger, and its Idempotency-Key.
import type { INodeProperties } from 'n8n-workflow';

export const IDEMPOTENCY_MODES = ['executionAndItem', 'itemContent', 'custom', 'none'] as const;
export type IdempotencyMode = (typeof IDEMPOTENCY_MODES)[number];

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		default: 'trigger',
		options: [
			{
				name: 'Trigger a Call',
				value: 'trigger',
				action: 'Trigger a call',
				description:
					'Place an outbound call by a voice agent; the answer means the call is stored and will end in one terminal event',
			},
		],
	},
	{
		displayName: 'Phone Number',
		name: 'phoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: '+14155552671',
		description:
			'The number to call in E.164: "+", country code, digits, no spaces or dashes. Not normalized: anything else is refused.',
		displayOptions: { show: { operation: ['trigger'] } },
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions: { show: { operation: ['trigger'] } },
		options: [
			{
				displayName: 'Agent ID',
				name: 'agentId',
				type: 'string',
				default: '',
				placeholder: 'c51ebacf-65fa-4b45-8ce0-edeb8cafdbfb',
				description: "The agent's UUID; without it, the account's default agent calls",
			},
			{
				displayName: 'Email',
				name: 'email',
				type: 'string',
				placeholder: 'name@email.com',
				default: '',
				description: "The callee's email, passed to the agent's prompt as context",
			},
			{
				displayName: 'Metadata (JSON)',
				name: 'metadata',
				type: 'json',
				default: '{}',
				description:
					'Key-value pairs passed through to webhooks and call records: up to 50 keys of 1-40 characters; values a string (up to 500 characters), number, boolean or null',
			},
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description:
					"The callee's name, passed to the agent's prompt as context (up to 200 characters)",
			},
			{
				displayName: 'Recipient Time Zone',
				name: 'recipientTimezone',
				type: 'string',
				default: '',
				placeholder: 'America/New_York',
				description:
					"The callee's IANA time zone, for agents whose calling windows follow the recipient; a UTC offset such as +05:00 is refused",
			},
			{
				displayName: 'Scheduled At',
				name: 'scheduledAt',
				type: 'string',
				default: '',
				placeholder: '2026-12-01T09:30:00-05:00',
				description:
					'Dial no earlier than this: an RFC 3339 date-time with its offset (Z or ±HH:MM), at most 30 days ahead. An expression such as {{ $now.plus(1, "hour") }} gives one.',
			},
		],
	},
	{
		displayName: 'Idempotency Key',
		name: 'idempotencyKeyMode',
		type: 'options',
		default: 'executionAndItem',
		description:
			'Sent as Idempotency-Key: a repeat with the same key and body within 24 hours gets the first answer again instead of a second call',
		displayOptions: { show: { operation: ['trigger'] } },
		options: [
			{
				name: 'From the Execution and Item',
				value: 'executionAndItem',
				description:
					'One key per execution, item and body: a node retry (Retry On Fail) does not call twice. n8n\'s "Retry execution" starts a new execution, so a new key.',
			},
			{
				name: 'From the Item Content',
				value: 'itemContent',
				description:
					'One key per workflow, node and body: also covers "Retry execution", but the same fields sent again within 24 hours do not call again',
			},
			{
				name: 'Custom',
				value: 'custom',
				description: 'A key you give, such as your CRM record ID',
			},
			{ name: 'None', value: 'none', description: 'No Idempotency-Key: each run calls' },
		],
	},
	{
		displayName: 'Custom Idempotency Key',
		name: 'idempotencyKey',
		type: 'string',
		default: '',
		required: true,
		description: '1 to 255 printable ASCII characters, no spaces',
		displayOptions: { show: { operation: ['trigger'], idempotencyKeyMode: ['custom'] } },
	},
];
