// The agent form's hand-off: its values (a new agent's, a stored agent's, or what was sent), each field's problem in
// words next to it, and what the form asks of src/admin/agents.ts in callctl's terms (each line of the pairs' text
// becomes one "name=value"; an empty address the default stream, or no SIP destination).
import { HANDOFF_STATIC_MAX, HANDOFF_URI_MAX, HANDOFF_VALUE_MAX } from '../../../schemas/agent-runtime.js';
import type { AgentForm } from '../../../schemas/dashboard/agents.js';
import {
  HandoffSettingError,
  handoffProblem,
  pairTexts,
  parseHandoffPairs,
  parseSipUri,
  parseStreamUrl,
  RESERVED_SIP_HEADERS,
  RESERVED_STREAM_PARAMETERS,
  storedPairs,
  type HandoffInput,
  type HandoffKind,
} from '../../domain/hand-off-settings.js';

/** The hand-off as the form shows it: the kind, the addresses as text, the pairs one "name=value" a line. */
export interface HandoffValues {
  handoff: HandoffKind;
  streamUrl: string;
  streamParameters: string;
  sipUri: string;
  sipHeaders: string;
}

/** What the form states of the hand-off's rules. */
export const HANDOFF_RULES = {
  pairsMax: HANDOFF_STATIC_MAX,
  valueMax: HANDOFF_VALUE_MAX,
  uriMax: HANDOFF_URI_MAX,
  reservedParameters: RESERVED_STREAM_PARAMETERS.join(', '),
  reservedHeaders: RESERVED_SIP_HEADERS.join(', '),
};

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const lines = (value: string) => value.split(/\r\n|\r|\n/);

/** A new agent's hand-off: the service's stream, nothing static. */
export const NEW_HANDOFF: HandoffValues = {
  handoff: 'stream',
  streamUrl: '',
  streamParameters: '',
  sipUri: '',
  sipHeaders: '',
};

/** A stored agent's hand-off as the form shows it. */
export function handoffValuesOfAgent(agent: {
  handoff: HandoffKind;
  streamUrl: string | null;
  streamParameters: unknown;
  sipUri: string | null;
  sipHeaders: unknown;
}): HandoffValues {
  return {
    handoff: agent.handoff,
    streamUrl: agent.streamUrl ?? '',
    streamParameters: pairTexts(storedPairs(agent.streamParameters)).join('\n'),
    sipUri: agent.sipUri ?? '',
    sipHeaders: pairTexts(storedPairs(agent.sipHeaders)).join('\n'),
  };
}

/** What was sent, to show again; a field the form did not send shows `before`. */
export function handoffValuesOfForm(body: AgentForm, before: HandoffValues): HandoffValues {
  return {
    handoff: body.handoff === 'sip' || body.handoff === 'stream' ? body.handoff : before.handoff,
    streamUrl: body.stream_url === undefined ? before.streamUrl : text(body.stream_url),
    streamParameters: body.stream_parameters === undefined ? before.streamParameters : text(body.stream_parameters),
    sipUri: body.sip_uri === undefined ? before.sipUri : text(body.sip_uri),
    sipHeaders: body.sip_headers === undefined ? before.sipHeaders : text(body.sip_headers),
  };
}

/** What the form asks of createAgent or updateAgent: each field it sent (one it left out keeps its value). */
export function handoffInput(body: AgentForm, allowPrivateTargets: boolean): HandoffInput {
  const address = (value: string | undefined) => (value === undefined ? undefined : value.trim() || null);
  return {
    handoff: body.handoff,
    streamUrl: address(body.stream_url),
    streamParameters: body.stream_parameters === undefined ? undefined : lines(body.stream_parameters),
    sipUri: address(body.sip_uri),
    sipHeaders: body.sip_headers === undefined ? undefined : lines(body.sip_headers),
    allowPrivateTargets,
  };
}

/** The field's problem as the domain words it, ending with a full stop, or null. */
function problemOf(read: () => unknown): string | null {
  try {
    read();
    return null;
  } catch (error) {
    if (error instanceof HandoffSettingError) return `${error.message}.`;
    throw error;
  }
}

/**
 * Every problem of the hand-off's fields, each next to its field: both kinds' fields are checked (the unused kind's
 * are kept), and a SIP hand-off without its address is put on the address (a form without the address field keeps
 * the agent's: src/admin/agents.ts checks that one).
 */
export function handoffProblems(body: AgentForm, allowPrivate: boolean): Record<string, string> {
  const errors: Record<string, string> = {};
  const streamUrl = text(body.stream_url).trim();
  const sipUri = text(body.sip_uri).trim();
  const checks = {
    stream_url: streamUrl && (() => parseStreamUrl(streamUrl, allowPrivate)),
    stream_parameters: () => parseHandoffPairs('stream', lines(text(body.stream_parameters))),
    sip_uri: sipUri && (() => parseSipUri(sipUri, allowPrivate)),
    sip_headers: () => parseHandoffPairs('sip', lines(text(body.sip_headers))),
  };
  for (const [field, check] of Object.entries(checks)) {
    const problem = check ? problemOf(check) : null;
    if (problem) errors[field] = problem;
  }
  const missing = body.sip_uri !== undefined && body.handoff === 'sip' && handoffProblem('sip', sipUri || null);
  if (missing && !errors.sip_uri) errors.sip_uri = `${missing}.`;
  return errors;
}
