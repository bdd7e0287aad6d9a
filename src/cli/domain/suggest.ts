import type { Command } from 'commander';

/**
 * Stops on a word that names no subcommand of `command`, suggesting the
 * nearest names with the rest of the line, as gh does: `svc key list` →
 * "Did you mean 'svc keys list'?". Commander does this only for commands
 * without an action of their own, and `svc` and `svc keys` have one (the
 * interactive manager).
 */
export function unknownCommand(command: Command, words: string[]): never {
  const [word = '', ...rest] = words;
  const path = commandPath(command);
  const visible = command.commands.filter((sub) => !(sub as Command & { _hidden?: boolean })._hidden);
  const near = nearest(word, visible.map((sub) => [sub.name(), ...sub.aliases()]));
  const option = optionNamed(command, word);
  const elsewhere = meantFromElsewhere(command, words);
  const suggestion =
    elsewhere !== null
      ? `\nDid you mean '${elsewhere}'?`
      : option !== null
      ? `\nDid you mean '${[path, option, ...rest].join(' ')}'?`
      : near.length === 0
        ? ''
        : `\nDid you mean ${near.map((name) => `'${[path, name, ...rest].join(' ')}'`).join(' or ')}?`;
  command.error(`error: unknown command '${word}'${suggestion}\nSee '${path} --help'.`, { code: 'commander.unknownCommand' });
}

/**
 * `svc help WORD` where WORD names no command below `command`, nor one of
 * `topics`: a usage error (exit 2) with the nearest, as for a mistyped command.
 */
export function unknownHelpTopic(command: Command, word: string, topics: readonly string[]): never {
  const help = ['svc', 'help', ...commandPath(command).split(' ').slice(1)].join(' ');
  const visible = command.commands.filter((sub) => !(sub as Command & { _hidden?: boolean })._hidden);
  const near = nearest(word, [...visible.map((sub) => [sub.name(), ...sub.aliases()]), ...topics.map((topic) => [topic])]);
  const suggestion = near.length === 0 ? '' : `\nDid you mean ${near.map((name) => `'${help} ${name}'`).join(' or ')}?`;
  command.error(`error: no help on '${word}'${suggestion}\nSee '${help}'.`, { code: 'commander.unknownCommand' });
}

/**
 * The option a bare word names, as `svc version` names `--version`: an
 * option of the command or of a command above it (the program's options
 * are taken anywhere on the line).
 */
function optionNamed(command: Command, word: string): string | null {
  for (let c: Command | null = command; c; c = c.parent) {
    const option = c.options.find((o) => o.long === `--${word.toLowerCase()}`);
    if (option?.long) return option.long;
  }
  return null;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The profiles a name that names none most likely meant (a typo: `prdo` for
 * `prod`), for every place a profile is named: a command's --profile,
 * SVC_PROFILE, a project's `.svc-profile`, the manager's Switch profile.
 */
export function meantProfiles(name: string, profiles: readonly string[]): string[] {
  return profiles.includes(name) ? [] : nearest(name, profiles.map((profile) => [profile]));
}

/** "Did you mean 'work'?" for a profile name that names none, when one is near it (a typo); '' when none is. */
export function nearProfile(name: string, profiles: readonly string[], spell: (profile: string) => string = (profile) => `'${profile}'`): string {
  const near = meantProfiles(name, profiles);
  return near.length === 0 ? '' : ` Did you mean ${near.map(spell).join(' or ')}?`;
}

/**
 * The commands `word` most likely meant, each by its first spelling (its
 * name; an alias only leads to it): the nearest within a small edit
 * distance (a typo, a missing or doubled letter, two letters swapped), or
 * that start with the word.
 */
export function nearest(word: string, commands: string[][]): string[] {
  const typed = word.toLowerCase();
  const scored = commands.map((spellings) => ({
    name: spellings[0]!,
    distance: Math.min(
      ...spellings.map((s) => {
        const spelling = s.toLowerCase();
        const close = editDistance(typed, spelling);
        return typed.length >= 3 && spelling.startsWith(typed) ? Math.min(close, 1) : close;
      }),
    ),
    limit: Math.max(1, Math.floor(Math.min(typed.length, spellings[0]!.length) / 3)),
  }));
  const near = scored.filter((s) => s.distance <= s.limit);
  const best = Math.min(...near.map((s) => s.distance));
  return near.filter((s) => s.distance === best).map((s) => s.name);
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost one each. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * Words people bring from other CLIs (gh, stripe, heroku, aws) for what
 * svc calls by another name, by the command words as typed: an edit
 * distance cannot see that `delete` means `revoke`. Only suggested, never
 * run (as gh does not run `gh auth whoami`): a revoke cannot be undone, and
 * a word that runs something else is one more name to learn. The words
 * svc's own aliases cover (`keys ls`, `keys rm`, `profile rm`) are not here.
 */
const SYNONYMS: Readonly<Record<string, string>> = {
  'svc whoami': 'svc status',
  'svc auth login': 'svc login',
  'svc auth logout': 'svc logout',
  'svc auth status': 'svc status',
  'svc auth whoami': 'svc status',
  'svc signin': 'svc login',
  'svc sign-in': 'svc login',
  'svc signout': 'svc logout',
  'svc sign-out': 'svc logout',
  'svc apikeys': 'svc keys',
  'svc api-keys': 'svc keys',
  'svc tokens': 'svc keys',
  'svc keys delete': 'svc keys revoke',
  'svc keys remove': 'svc keys revoke',
  'svc keys del': 'svc keys revoke',
  'svc keys destroy': 'svc keys revoke',
  'svc keys show': 'svc keys view',
  'svc keys get': 'svc keys view',
  'svc keys describe': 'svc keys view',
  'svc keys info': 'svc keys view',
  'svc keys new': 'svc keys create',
  'svc keys add': 'svc keys create',
  'svc keys generate': 'svc keys create',
  'svc keys roll': 'svc keys rotate',
  'svc keys regenerate': 'svc keys rotate',
  'svc keys test': 'svc keys ping',
  'svc keys check': 'svc keys ping',
  'svc profile delete': 'svc profile remove',
  'svc profile switch': 'svc profile use',
  'svc profile select': 'svc profile use',
};

/** Every synonym, for the table test and the man page's note: the words as typed, and what svc calls it. */
export const COMMAND_SYNONYMS: readonly (readonly [typed: string, meant: string])[] = Object.entries(SYNONYMS);

/**
 * The svc command line `words` (below `command`) most likely meant when
 * they are a word from another CLI (SYNONYMS; two words before one, for
 * `auth login`), with the rest of the line; or, below the program, a
 * subcommand of `keys` typed without it (`svc create ci` → `svc keys
 * create ci`). Null when they are none of those.
 */
export function meantFromElsewhere(command: Command, words: readonly string[]): string | null {
  const path = commandPath(command);
  for (const taken of [2, 1]) {
    if (words.length < taken) continue;
    const meant = SYNONYMS[[path, ...words.slice(0, taken)].join(' ').toLowerCase()];
    if (meant !== undefined) return [meant, ...words.slice(taken)].join(' ');
  }
  const keys = command.parent === null ? command.commands.find((sub) => sub.name() === 'keys') : undefined;
  const [word = '', ...rest] = words;
  if (keys === undefined || word === '') return null;
  if (keys.commands.some((sub) => sub.name() === word || sub.aliases().includes(word))) return ['svc keys', word, ...rest].join(' ');
  const meant = SYNONYMS[`svc keys ${word.toLowerCase()}`];
  return meant === undefined ? null : [meant, ...rest].join(' ');
}

/**
 * Options people bring from other CLIs, with what svc takes instead.
 * `key`: svc never takes a key as an argument (it would show in `ps` and
 * in shell history); `svc login --with-key` reads it from stdin.
 */
const OPTION_SYNONYMS: Readonly<Record<string, string>> = {
  '--token': 'key',
  '--api-key': 'key',
  '--apikey': 'key',
  '--key': 'key',
  '--url': '--base-url',
  '--host': '--base-url',
  '--server': '--base-url',
  '--endpoint': '--base-url',
  '--api-url': '--base-url',
  '--force': '--yes',
  '--confirm': '--yes',
  '--output': '--json',
  '--format': '--json',
  '--debug': '--verbose',
  '--non-interactive': '--no-input',
  '--no-prompt': '--no-input',
};

/** Every option synonym, for the table test. */
export const OPTION_SYNONYM_FLAGS: readonly string[] = Object.keys(OPTION_SYNONYMS);

/**
 * What to say of an option `command` does not know (`flag`, without any
 * `=value`) when it is one from another CLI: the svc command line with
 * svc's option, or, for a key, where svc takes one. Null when it is none
 * of those, or when svc's option is not one this command takes (`--force`
 * is only `--yes` where there is a --yes).
 */
export function optionFromElsewhere(command: Command, flag: string): string | null {
  const meant = OPTION_SYNONYMS[flag.toLowerCase()];
  if (meant === undefined) return null;
  const path = commandPath(command);
  if (meant === 'key') {
    return command.options.some((o) => o.long === '--with-key')
      ? `Did you mean '${path} --with-key'? It reads the key from stdin: svc never takes a key as an argument.`
      : "svc never takes a key as an argument (it would show in `ps` and in shell history): it uses SVC_API_KEY, or the profile's key (`svc login --with-key` saves one from stdin).";
  }
  for (let c: Command | null = command; c; c = c.parent) {
    if (c.options.some((o) => o.long === meant)) return `Did you mean '${path} ${meant}'?`;
  }
  return null;
}
