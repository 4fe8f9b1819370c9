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
