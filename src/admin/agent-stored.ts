// An agent's row as read, as the fields an update starts from: its JSON columns as they were stored (by hand,
// perhaps), not yet checked, and its pairs read back into their stored shape. agent-input.ts applies a change to them.
import { storedPairs } from '../domain/hand-off-settings.js';
import type { AgentFields } from '../storage/index.js';

type JsonField = 'callingWindows' | 'retryOn' | 'retryWaitsMinutes' | 'streamParameters' | 'sipHeaders';

/** An agent's row as read: its JSON fields as they were stored (by hand, perhaps), not yet checked. */
export type StoredAgent = Omit<AgentFields, JsonField> & Record<JsonField, unknown>;

/** The stored agent's fields, as an update compares and changes them. */
export function storedAgentFields(agent: StoredAgent): AgentFields {
  return {
    name: agent.name,
    phoneNumber: agent.phoneNumber,
    timezone: agent.timezone,
    callingWindows: agent.callingWindows as AgentFields['callingWindows'],
    outsideWindowPolicy: agent.outsideWindowPolicy,
    windowTimezone: agent.windowTimezone,
    maxAttempts: agent.maxAttempts,
    retryOn: agent.retryOn as AgentFields['retryOn'],
    retryWaitsMinutes: agent.retryWaitsMinutes as AgentFields['retryWaitsMinutes'],
    voicemail: agent.voicemail,
    voicemailMessage: agent.voicemailMessage,
    handoff: agent.handoff,
    streamUrl: agent.streamUrl,
    streamParameters: storedPairs(agent.streamParameters),
    sipUri: agent.sipUri,
    sipHeaders: storedPairs(agent.sipHeaders),
    consentRequired: agent.consentRequired,
  };
}
