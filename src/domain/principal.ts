// Who a request acts for, as a valid API key resolves it: the account, its agency and plan, and its default agent.
import type { WindowTimezone } from '../../schemas/vocabulary.js';

export interface Principal {
  keyId: string;
  accountId: string;
  accountKind: 'agency' | 'client';
  /** The agency at the top: the account itself for agencies. */
  agencyId: string;
  /** The agency's plan (clients inherit it): src/domain/api-access.ts's governingPlan. */
  plan: string | null;
  /** The account's switch and, for a client, its agency's switch too: src/domain/api-access.ts's apiAccessOn. */
  apiAccessEnabled: boolean;
  defaultAgentId: string | null;
  /** The default agent as read with the key (null when there is none); only checked when the trigger is accepted. */
  defaultAgent: AgentSnapshot | null;
  /**
   * The calling-rules settings as stored (accounts.calling_rules), read with the key: the agency's (the account's own
   * for an agency) and, for a client, its own narrower hours; null where nothing is set (off). Read on every request,
   * so a change applies to the next trigger (no cache: src/compliance/policy.ts reads them).
   */
  callingRules: { agency: unknown; client: unknown };
}

/** What accepting a call needs to know about an agent. */
export interface AgentSnapshot {
  id: string;
  accountId: string;
  agencyId: string;
  phoneNumber: string | null;
  timezone: string;
  callingWindows: unknown;
  outsideWindowPolicy: 'queue' | 'reject';
  /** Whose local time its windows are read in: its own zone, or the callee's (src/domain/recipient-timezone.ts). */
  windowTimezone: WindowTimezone;
  /** Its triggers must carry a consent record (agents.consent_required). */
  consentRequired: boolean;
}
