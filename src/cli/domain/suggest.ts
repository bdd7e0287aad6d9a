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
  const suggestion =
    option !== null
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
