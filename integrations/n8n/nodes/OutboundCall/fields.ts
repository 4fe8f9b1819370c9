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
				displayName: 'Consent',
				name: 'consent',
				type: 'fixedCollection',
				placeholder: 'Add Consent',
				default: {},
				description:
					"The callee's consent on record, stored with the call and in every event. Required when the agent, or its agency's calling rules, say so (400 Consent is required for this agent).",
				options: [
					{
						displayName: 'Consent',
						name: 'record',
						values: [
							{
								displayName: 'Evidence URL',
								name: 'evidenceUrl',
								type: 'string',
								default: '',
								placeholder: 'https://example.com/consents/L-42.pdf',
								description:
									'An https:// link to the evidence (a form submission, a recording), at most 2000 characters, no spaces',
							},
							{
								displayName: 'Obtained At',
								name: 'obtainedAt',
								type: 'string',
								required: true,
								default: '',
								placeholder: '2026-11-20T14:05:00-05:00',
								description:
									'When the callee gave it: an RFC 3339 date-time with its offset (Z or ±HH:MM), not in the future',
							},
							{
								displayName: 'Source',
								name: 'source',
								type: 'string',
								required: true,
								default: '',
								placeholder: 'Web form, example.com/quote',
								description: 'Where it was obtained, at most 200 characters',
							},
							{
								displayName: 'Type',
								name: 'type',
								type: 'options',
								required: true,
								default: 'express_written',
								description: 'The kind of consent the callee gave',
								options: [
									{
										name: 'Established Business Relationship',
										value: 'established_business_relationship',
									},
									{ name: 'Express', value: 'express' },
									{ name: 'Express Written', value: 'express_written' },
									{ name: 'Inquiry', value: 'inquiry' },
								],
							},
						],
					},
				],
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
				displayName: 'Recipient Region',
				name: 'recipientRegion',
				type: 'string',
				default: '',
				placeholder: 'US-FL',
				description:
					"Where the callee is, if known: a US state or territory or a Canadian province or territory as ISO 3166-2 (US-FL, CA-QC), or US or CA. The agency's calling rules, when on, check it beside the number's own places.",
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
