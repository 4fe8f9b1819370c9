// callctl help at three levels: every command (`callctl --help`), one group (`callctl webhook --help`) and one
// command (`callctl webhook set --help`), each with the options it takes; for people and as JSON.
import type { Command } from './command-types.js';
import { COMMANDS, GROUPS } from './commands.js';
import { COMMON_FLAGS, FLAG_HELP, type FlagName } from './flags.js';

export const HELP_USAGE = 'callctl [<group> [<command>]] --help';

export function commandName(command: Command): string {
  return command.words.join(' ');
}

export const groupOf = (command: Command) => command.words[0]!;

export function commandsOf(group: string): Command[] {
  return COMMANDS.filter((c) => groupOf(c) === group);
}

function options(commands: Command[]): { flag: string; help: string }[] {
  const flags = [...new Set(commands.flatMap((c) => c.flags))] as FlagName[];
  return [
    ...flags.map((f) => ({ flag: `--${f} ${FLAG_HELP[f].value}`.trimEnd(), help: FLAG_HELP[f].help })),
    ...COMMON_FLAGS,
  ];
}

function optionLines(commands: Command[]): string[] {
  const list = options(commands);
  const width = Math.max(...list.map((o) => o.flag.length));
  return ['Options:', ...list.map((o) => `  ${o.flag.padEnd(width)}  ${o.help}`)];
}

const commandLines = (commands: Command[]) =>
  commands.flatMap((c) => [`  ${c.usage.replace(/\n/g, '\n  ')}`, `      ${c.summary}`]);

const FOOTER = [
  'Exit codes: 0 done, 1 refused or failed (e.g. no such account), 2 usage error (the command line is wrong), 78 bad configuration.',
  "Configuration and database are the server's (environment variables; embedded PostgreSQL under DATA_DIR).",
];

/** Every command, for `callctl --help`. */
export function helpText(): string {
  const groups = [...new Set(COMMANDS.map(groupOf))];
  const lines = [
    'callctl: operator commands of the outbound call trigger service',
    '',
    'Commands:',
    ...commandLines(COMMANDS),
    '',
    'Groups:',
  ];
  const width = Math.max(...groups.map((g) => g.length));
  lines.push(...groups.map((g) => `  ${g.padEnd(width)}  ${GROUPS[g] ?? ''}`), '', ...optionLines(COMMANDS), '');
  lines.push(`Help on a group or a command: ${HELP_USAGE}`, ...FOOTER);
  return `${lines.join('\n')}\n`;
}

/** One group's commands and their options, for `callctl <group> --help`. */
export function groupHelpText(group: string): string {
  const commands = commandsOf(group);
  const lines = [
    `callctl ${group} - ${GROUPS[group] ?? ''}`,
    '',
    'Commands:',
    ...commandLines(commands),
    '',
    ...optionLines(commands),
    ...commands.flatMap(exampleLines),
  ];
  if (commands.length > 1) lines.push('', `Help on one: callctl ${group} <command> --help`);
  return `${lines.join('\n')}\n`;
}

const exampleLines = (command: Command) =>
  command.examples?.length ? ['', 'Examples:', ...command.examples.map((e) => `  ${e}`)] : [];

/** One command, for `callctl <group> <command> --help`. */
export function commandHelpText(command: Command): string {
  const lines = [
    `usage: ${command.usage}`,
    '',
    command.summary,
    '',
    ...optionLines([command]),
    ...exampleLines(command),
  ];
  return `${lines.join('\n')}\n`;
}

const describeCommand = (c: Command) => ({
  command: commandName(c),
  usage: c.usage,
  summary: c.summary,
  options: options([c]),
  ...(c.examples ? { examples: c.examples } : {}),
});

/** The same as data, for `--json`. */
export function helpObject(): Record<string, unknown> {
  return { commands: COMMANDS.map(describeCommand), groups: GROUPS };
}

export function groupHelpObject(group: string): Record<string, unknown> {
  return { group, summary: GROUPS[group] ?? '', commands: commandsOf(group).map(describeCommand) };
}

export function commandHelpObject(command: Command): Record<string, unknown> {
  return describeCommand(command);
}
