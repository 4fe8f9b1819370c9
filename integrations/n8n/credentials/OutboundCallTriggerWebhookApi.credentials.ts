// The webhook signing secret (whsec_...) the service signs call events with, per Standard Webhooks.
import type { Icon, ICredentialType, INodeProperties } from 'n8n-workflow';

export class OutboundCallTriggerWebhookApi implements ICredentialType {
	name = 'outboundCallTriggerWebhookApi';

	displayName = 'Outbound Call Trigger Webhook API';

	icon: Icon = {
		light: 'file:../icons/outbound-call-trigger.svg',
		dark: 'file:../icons/outbound-call-trigger.dark.svg',
	};

	documentationUrl =
		'https://github.com/outbound-call-trigger/outbound-call-trigger/blob/main/docs/integrations.md#n8n';

	properties: INodeProperties[] = [
		{
			displayName: 'Signing Secret',
			name: 'signingSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			placeholder: 'whsec_...',
			description:
				'The webhook signing secret shown in the dashboard (Settings → API & Webhooks) when the webhook URL is saved; it starts with whsec_',
			required: true,
		},
	];
}
