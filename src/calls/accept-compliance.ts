// The trigger's side of the calling rules (PRODUCT.md, "Calling within the law"): its recipient_region and consent
// fields, "consent required" (the agent's setting, or its agency's when the rules are on) and the `reject` policy's
// refusal of a dial moment the rules do not allow. The agency's settings come with the key (src/storage/key-lookup.ts):
// with the rules off, nothing here reads anything.
import { SCHEDULE_SKEW_MINUTES, TRIGGER_FIELD_ERRORS, type TriggerBody } from '../../schemas/trigger.js';
import type { ConsentData } from '../../schemas/compliance.js';
import { parseRecipientRegion, RECIPIENT_REGION_MESSAGE } from '../compliance/candidates.js';
import { callPolicy, candidatesOf, checkHours, type CallPolicy } from '../compliance/policy.js';
import type { AgentSnapshot, Principal } from '../domain/principal.js';
import { AppError } from '../errors.js';
import type { Storage } from '../storage/index.js';

/** The trigger's recipient_region as stored (US-FL), or null for none; 400 naming the field for an unknown region. */
export function recipientRegionOf(body: TriggerBody): string | null {
  if (body.recipient_region === undefined) return null;
  try {
    return parseRecipientRegion(body.recipient_region);
  } catch {
    throw new AppError('VALIDATION', { detail: RECIPIENT_REGION_MESSAGE });
  }
}

/**
 * The trigger's consent as stored (as validated, its fields in the schema's order), or null for none; 400 naming the
 * field for an obtained_at in the future (a few minutes ahead, as scheduled_at's skew, is read as now).
 */
export function consentOf(body: TriggerBody, now: Date): ConsentData | null {
  const given = body.consent;
  if (given === undefined) return null;
  if (Date.parse(given.obtained_at) > now.getTime() + SCHEDULE_SKEW_MINUTES * 60_000)
    throw new AppError('VALIDATION', { detail: TRIGGER_FIELD_ERRORS.consentInFuture });
  const { type, obtained_at, source, evidence_url } = given;
  return evidence_url === undefined ? { type, obtained_at, source } : { type, obtained_at, source, evidence_url };
}

/**
 * The policy the agency's settings make for this call, or null while its rules are off (nothing stored: nothing is
 * parsed). For an agency's key on a client's agent, the client's narrower hours are read only when `needClient`
 * (the `reject` check needs them), the one case that costs a read.
 */
async function policyOf(
  storage: Storage,
  principal: Principal,
  agent: AgentSnapshot,
  needClient: (policy: CallPolicy) => boolean,
): Promise<CallPolicy | null> {
  const { agency, client } = principal.callingRules;
  // Off (never set): nothing is read.
  if (agency === null || agency === undefined) return null;
  const policy = callPolicy(agency, agent.accountId === principal.accountId ? client : null);
  if (!policy.enabled) return null;
  if (agent.accountId === principal.accountId || !needClient(policy)) return policy;
  const owner = await storage.accounts.findAccountById(agent.accountId);
  return callPolicy(agency, owner?.callingRules ?? null);
}

export interface RulesInput {
  principal: Principal;
  agent: AgentSnapshot;
  phoneNumber: string;
  recipientRegion: string | null;
  consent: ConsentData | null;
}

/**
 * The checks of the agent and its agency's settings, in the error table's order: consent first (400 "Consent is
 * required for this agent"); then `hours(at)`, for an agent whose policy is `reject`, refuses a dial moment the
 * calling rules do not allow (400 "Outside the permitted calling hours for this number"). The caller runs `hours`
 * after the agent's own calling window, with the call's first possible dial.
 */
export async function callingRulesFor(storage: Storage, input: RulesInput): Promise<{ hours: (at: Date) => void }> {
  const { principal, agent } = input;
  const reject = agent.outsideWindowPolicy === 'reject';
  const policy = await policyOf(storage, principal, agent, () => reject);
  if (input.consent === null && (agent.consentRequired || policy?.consentRequired === true))
    throw new AppError('CONSENT_REQUIRED');
  return {
    hours(at) {
      if (policy === null || !reject) return;
      const candidates = candidatesOf(input.phoneNumber, input.recipientRegion);
      if (!checkHours(policy, candidates, at).allowed) throw new AppError('OUTSIDE_PERMITTED_HOURS');
    },
  };
}
