// The rules table of docs/calling-rules.md, rendered from src/compliance/calling-rules.json: the data test compares
// the page with it, and prints it when they differ, so a change to the data is one copy into the page.
import { DAY_NAMES } from '../../schemas/calling-window.js';
import type { CallingRuleData, CallingRulesData, TimeRangeData } from '../../schemas/calling-rules.js';

export const TABLE_START = '<!-- calling-rules-table:start (rendered from src/compliance/calling-rules.json) -->';
export const TABLE_END = '<!-- calling-rules-table:end -->';

const DAY_LABEL: Record<string, string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

const SOURCE_LABEL = { official_text: 'official text', text_copy: 'copy of the text', summary: 'summary' };

/** "Mon–Fri 09:00–18:00; Sat 10:00–17:00": runs of days with the same hours. */
function hoursCell(rule: CallingRuleData): string {
  const runs: { first: string; last: string; range: TimeRangeData }[] = [];
  for (const day of DAY_NAMES) {
    const range = rule.hours[day];
    if (!range) continue;
    const previous = runs.at(-1);
    const adjacent =
      previous && DAY_NAMES.indexOf(previous.last as (typeof DAY_NAMES)[number]) === DAY_NAMES.indexOf(day) - 1;
    if (previous && adjacent && previous.range.start === range.start && previous.range.end === range.end)
      previous.last = day;
    else runs.push({ first: day, last: day, range });
  }
  if (runs.length === 1 && runs[0]!.first === 'mon' && runs[0]!.last === 'sun')
    return `Every day ${runs[0]!.range.start}–${runs[0]!.range.end}`;
  return runs
    .map(({ first, last, range }) => {
      const days = first === last ? DAY_LABEL[first] : `${DAY_LABEL[first]}–${DAY_LABEL[last]}`;
      return `${days} ${range.start}–${range.end}`;
    })
    .join('; ');
}

function daysCell(rule: CallingRuleData): string {
  const parts = rule.days_not_allowed.map((d) => DAY_LABEL[d]!);
  if (rule.holidays.length > 0)
    parts.push(`${rule.holidays.length} holidays${rule.holidays_complete ? '' : ' (list incomplete)'}`);
  else if (!rule.holidays_complete) parts.push('holidays (not listed yet)');
  return parts.join(', ') || '—';
}

function capCell(rule: CallingRuleData): string {
  if (!rule.cap) return '—';
  return `${rule.cap.count} per ${rule.cap.window_hours} h${rule.cap.scope === 'same_subject' ? ', same subject' : ''}`;
}

const escape = (text: string) => text.replace(/\|/g, '\\|');

/** Which rules were read in the law's own words and which only in descriptions of it, one line per kind of source. */
function sourcesList(data: CallingRulesData): string[] {
  const how = {
    official_text: "In the legislature's or regulator's own text",
    text_copy: 'In a copy of the text on another site',
    summary: 'In summaries only, still to confirm from the text',
  } as const;
  return (['official_text', 'text_copy', 'summary'] as const).map((source) => {
    const ids = data.rules.filter((rule) => rule.citation.source === source).map((rule) => `\`${rule.id}\``);
    return `- ${how[source]} (${ids.length}): ${ids.join(', ') || '—'}`;
  });
}

/** The table, one row per rule, in the file's order, then the rules grouped by how they were read. */
export function renderRulesTable(data: CallingRulesData): string {
  const rows = data.rules.map((rule) => {
    const c = rule.citation;
    const source = `[${escape(c.section)}](${c.url}) (${SOURCE_LABEL[c.source]}, checked ${c.checked})`;
    return `| ${rule.region} | ${rule.applies_to.join(' + ')} | ${hoursCell(rule)} | ${daysCell(rule)} | ${capCell(rule)} | ${source} |`;
  });
  return [
    TABLE_START,
    '',
    '| Region | Applies to | Allowed hours (callee local time) | Not allowed | Cap per number | Source |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Version ${data.version}, describing the law as of ${data.effective_date}. How each rule was read:`,
    '',
    ...sourcesList(data),
    '',
    TABLE_END,
  ].join('\n');
}
