// The Calls list's filters as typed: what they hold, and which agent or client a typed name or id chooses.
import { CallsQuery } from '../../../schemas/dashboard/calls.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import type { MetadataMatch } from '../../storage/index.js';
import type { ShownTimes } from '../format/shown-times.js';

export const FILTER_NAMES = [
  'status',
  'agent',
  'agent_name',
  'client',
  'client_name',
  'from',
  'to',
  'number',
  'name',
  'meta_key',
  'meta_value',
  'outcome',
  'call',
  'held',
] as const;
/** Above this many agents (or accounts), the Agent (or Client) filter is a name to type rather than a menu. */
export const FILTER_MENU_MAX = 100;
/** The most agents or clients offered to choose from when a typed name fits several. */
export const NAME_CHOICES_MAX = 20;
/** A number as JSON writes it: such a search value matches the JSON number too. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The JSON values a metadata search value stands for: itself as a string, and a number or literal it spells. */
export function metadataValues(value: string): MetadataMatch['values'] {
  if (JSON_NUMBER.test(value) && Number.isFinite(Number(value))) return [Number(value), value];
  if (value === 'true' || value === 'false' || value === 'null') return [JSON.parse(value) as unknown, value];
  return [value];
}

/** The most outcome labels the Outcome filter suggests (a runtime with more is typed). */
export const OUTCOME_SUGGESTIONS = 100;

/**
 * The Outcome filter: the runtime's label as typed, in lower case (labels are lower case), or the problem with it.
 * `refused`: the schema refused it (not a label's characters, or longer).
 */
export function outcomeFilter(
  typed: string | undefined,
  refused: boolean,
): { outcome: string | null; problem?: string } {
  if (!typed) return { outcome: null };
  if (refused)
    return {
      outcome: null,
      problem: `"${typed}" is not an outcome: an outcome is 1 to 64 of a-z, 0-9, _ . and - (like appointment_booked).`,
    };
  return { outcome: typed.toLowerCase() };
}

/** The Held filter, a checkbox: "yes" (the schema refuses anything else, `refused`), or the problem with it. */
export function heldFilter(typed: string | undefined, refused: boolean): { held: boolean; problem?: string } {
  if (!typed) return { held: false };
  if (refused) return { held: false, problem: `"${typed}" is not a choice of the held filter: tick the box, or not.` };
  return { held: true };
}

/** The days the export form first offers: the last 30, in the zone the page shows times in. */
export function exportForm(times: ShownTimes, now: Date) {
  return {
    exportAction: '/dashboard/calls/export.csv',
    exportFrom: times.day(new Date(now.getTime() - 30 * 86_400_000)),
    exportTo: times.day(now),
  };
}

/** The filters as typed (trimmed; empty ones left out), for the form and the links. */
export function typedFilters(query: CallsQuery | undefined): Partial<Record<(typeof FILTER_NAMES)[number], string>> {
  const typed: Partial<Record<(typeof FILTER_NAMES)[number], string>> = {};
  for (const name of FILTER_NAMES) {
    const value = query?.[name]?.trim();
    if (value) typed[name] = value;
  }
  return typed;
}

/**
 * The From (or, with `end`, To) filter: a day or a minute read in the zone the page shows times in (the viewer's, or
 * UTC), local midnight to local midnight across a change of the clocks; To includes its whole day or minute. Null,
 * with `problem`, when it is no such day or time.
 */
export function dateFilter(value: string, end: boolean, times: ShownTimes): { at: Date | null; problem: string } {
  return {
    at: times.parse(value, end),
    problem: `"${value}" is not a date: write it as YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in ${times.zone}.`,
  };
}

/** An agent or a client the filters name: its id and name. */
export interface Chosen {
  id: string;
  name: string;
}

/** What the Agent or Client filter came to: the one chosen (or none), a problem, or several that fit a typed name. */
export interface FilterChoice {
  chosen: Chosen | null;
  problem: string | null;
  choices: { label: string; chosen: Chosen }[];
}

const NO_CHOICE: FilterChoice = { chosen: null, problem: null, choices: [] };

/**
 * The Agent or Client filter: an id (a menu's choice, a link's) stands unless a name typed beside it no longer fits it;
 * else the typed name picks the one whose whole name it is, or the only one whose name starts with it. Several: the
 * first NAME_CHOICES_MAX to choose from.
 */
export async function chooseFrom(
  kind: { one: string; many: string },
  typed: { id?: string; idRefused: boolean; name?: string; nameCleared: boolean },
  lookUp: {
    byId: (id: string) => Promise<Chosen | null>;
    byName: (text: string, limit: number) => Promise<(Chosen & { label: string })[]>;
  },
  unknownId: (typedId: string) => string,
): Promise<FilterChoice> {
  const sameName = (a: string, b: string) => a.toLocaleLowerCase('en') === b.toLocaleLowerCase('en');
  // The form's name field sent empty beside the id it carried: the person cleared the filter.
  if (typed.nameCleared) return NO_CHOICE;
  if (typed.id) {
    const found = typed.idRefused ? null : await lookUp.byId(canonicalUuid(typed.id));
    if (!found) return { ...NO_CHOICE, problem: unknownId(typed.id) };
    if (!typed.name || sameName(found.name, typed.name)) return { ...NO_CHOICE, chosen: found };
  }
  if (!typed.name) return NO_CHOICE;
  const found = await lookUp.byName(typed.name, NAME_CHOICES_MAX + 1);
  const whole = found.filter((f) => sameName(f.name, typed.name!));
  if (whole.length === 1 || (whole.length === 0 && found.length === 1)) return { ...NO_CHOICE, chosen: found[0]! };
  if (found.length === 0) return { ...NO_CHOICE, problem: `No ${kind.one}'s name starts with "${typed.name}".` };
  const shown = found.slice(0, NAME_CHOICES_MAX);
  const count = found.length > NAME_CHOICES_MAX ? `More than ${NAME_CHOICES_MAX}` : String(found.length);
  return {
    chosen: null,
    problem: `${count} ${kind.many} have a name that starts with "${typed.name}": choose one below, or type more of the name.`,
    choices: shown.map((f) => ({ label: f.label, chosen: { id: f.id, name: f.name } })),
  };
}
