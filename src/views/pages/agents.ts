// The agents page's model: what src/views/pages/agents.eta reads (with the partials it includes).
import type { NamedList } from './list-filter.js';
import type { AccountKind, KeysOf } from './model-parts.js';

export type AgentsModel = {
  showAccount: boolean;
  agents: {
    id: string;
    name: string;
    accountName: string;
    accountKind: AccountKind;
    phone: string | null;
    timezone: string;
    windows: string[];
    policy: string;
    /** Calling hours are read in the callee's time zone (else the agent's). */
    calleeHours: boolean;
    /** The retry policy in words. */
    attempts: string;
    /** What happens when a machine answers, in words (a long message cut short). */
    voicemail: string;
    /** Where an answered call is handed, in words (handoffWords). */
    handoff: string;
    isDefault: boolean;
  }[];
  /** The archived agents (new triggers cannot use them; their calls keep them), by name: a page's worth at most. */
  archived: { id: string; name: string; accountName: string; accountKind: AccountKind; archivedAt: string }[];
  /** The archived agents (of the name filter's) left out of `archived`: the name filter finds them. */
  archivedMore: number;
  list: NamedList;
};

/** The fields agents.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const AGENTS_FIELDS = [
  'showAccount',
  'agents',
  'archived',
  'archivedMore',
  'list',
] as const satisfies readonly KeysOf<AgentsModel>[];

/** The longest address the list shows whole; a longer one is cut (the agent's page shows it whole). */
const LIST_ADDRESS_MAX = 60;
const cut = (text: string) => (text.length > LIST_ADDRESS_MAX ? `${text.slice(0, LIST_ADDRESS_MAX - 1)}…` : text);
const count = (n: number, one: string) => (n === 0 ? '' : `, ${n} ${one}${n === 1 ? '' : 's'}`);

/** An agent's hand-off in a few words: its kind, its address (or the service's default stream), how many pairs. */
export function handoffWords(agent: {
  handoff: 'stream' | 'sip';
  streamUrl: string | null;
  streamParameters: unknown;
  sipUri: string | null;
  sipHeaders: unknown;
}): string {
  const size = (pairs: unknown) => (Array.isArray(pairs) ? pairs.length : 0);
  if (agent.handoff === 'sip')
    return `SIP ${cut(agent.sipUri ?? '(no address)')}${count(size(agent.sipHeaders), 'header')}`;
  const to = agent.streamUrl === null ? "the service's default stream" : `stream ${cut(agent.streamUrl)}`;
  return `${to[0]!.toUpperCase()}${to.slice(1)}${count(size(agent.streamParameters), 'parameter')}`;
}
