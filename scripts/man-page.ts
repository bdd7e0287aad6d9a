import type { Command } from 'commander';
import { DEFAULT_POLICY } from '../src/client/policy.js';
import { DEFAULT_BASE_URL } from '../src/contract/paths.js';
import { ENVIRONMENT } from '../src/cli/terminal/environment.js';
import { ExitCode } from '../src/cli/errors/errors.js';
import { allCommands, describeProgram, type CommandDoc, type OptionDoc } from '../src/cli/docs/tree.js';

export interface ManPageInfo {
  version: string;
}

/**
 * man/svc.1 in groff man macros. Everything about commands comes from the
 * commander tree, the environment from src/cli/terminal/environment.ts; the rest
 * (files, exit status) is docs/contract.md §C.
 * No date: the page must come out byte-identical from the same tree, so a
 * test can tell when the committed page is stale.
 */
export function renderManPage(program: Command, info: ManPageInfo): string {
  const root = describeProgram(program);
  const lines: string[] = [
    '.\\" Generated from the command tree and src/cli/terminal/environment.ts by scripts/gen-man.mjs: edit those, then run `npm run man`.',
    `.TH ${quoted(root.name.toUpperCase())} 1 "" ${quoted(`${root.name} ${info.version}`)} "User Commands"`,
    // Hyphenating option names and variables would break them when copied; ragged right reads better in a terminal.
    '.nh',
    '.ad l',
    '.SH NAME',
    text(t`${bold(root.name)} - ${escape(lowerFirst(root.description.trim().replace(/\.$/, '')))}`),
    ...synopsis(root),
    ...description(root),
    '.SH COMMANDS',
    // Nested groups have a help command too; one entry for `svc help` is enough.
    ...allCommands(root)
      .filter((cmd) => !cmd.isHelp || cmd.path.length === 2)
      .flatMap((cmd) => commandSection(cmd, root.options)),
    '.SH OPTIONS',
    text(t`These options are accepted before or after any command.`),
    ...root.options.flatMap(optionItem),
    ...environment(),
    ...files(),
    ...exitStatus(),
    ...examples(root),
    '.SH SEE ALSO',
    text(t`${bold(`${root.name} help`)} ${italic('command')}, ${bold(`${root.name} completion`)} ${italic('shell')}, ${bold('jq')}(1)`),
  ];
  return `${lines.join('\n')}\n`;
}

function synopsis(root: CommandDoc): string[] {
  const runnable = allCommands(root).filter((cmd) => cmd.commands.length === 0 && !cmd.isHelp);
  return [
    '.SH SYNOPSIS',
    `.B ${quoted(root.name)}`,
    text(t`[${italic('global options')}] [${italic('command')} [${italic('options')}] [${italic('arguments')}]]`),
    '.PP',
    ...runnable.flatMap((cmd, i) => [...(i > 0 ? ['.br'] : []), ...usageLines(cmd)]),
  ];
}

function description(root: CommandDoc): string[] {
  const paragraphs = [
    escape(sentence(root.description)),
    ...root.notes.map(syntax),
    t`The API key comes from ${bold('SVC_API_KEY')}, else from the active profile in the config store (see ${bold('FILES')}).
      It is never taken from a command-line flag, where it would show in ${bold('ps')}(1) and in shell history.
      The service address comes from ${bold('--base-url')}, else ${bold('SVC_BASE_URL')}, else the profile,
      else the local reference server at ${escape(DEFAULT_BASE_URL)} (${bold('svc serve --local')}).`,
    t`Data goes to standard output; messages, warnings, progress and prompts go to standard error.
      With ${bold('--json')}, standard output holds exactly one JSON document, in the API's own shape.
      Tables and colour appear only on a terminal; piped output is tab-separated with a header line.`,
    t`Prompts appear only when standard input and standard error are terminals,
      ${bold('--no-input')} is absent and ${bold('CI')} is unset or empty.
      Otherwise a missing answer is a usage error that names the missing argument or flag.`,
    t`When the service answers 429 ${bold('RATE_LIMITED')}, svc sleeps for as long as it asks (with a countdown on a terminal)
      and tries again, until the total wait would pass ${bold('--max-wait')}; ${bold('--no-wait')} fails at once.
      Network errors and server errors are retried up to ${escape(String(DEFAULT_POLICY.maxRetries))} times with exponential backoff,
      except a POST that may have reached the server: a repeated create could leave a second live key whose secret nobody saw.`,
  ];
  return ['.SH DESCRIPTION', ...paragraphs.flatMap((p, i) => [...(i > 0 ? ['.PP'] : []), text(p)])];
}

function commandSection(cmd: CommandDoc, globals: OptionDoc[]): string[] {
  const lines = [`.SS ${quoted(cmd.path.join(' '))}`, ...usageLines(cmd)];
  if (cmd.aliases.length > 0) {
    const label = cmd.aliases.length > 1 ? 'Aliases' : 'Alias';
    lines.push('.br', text(t`${escape(label)}: ${join(cmd.aliases.map((alias) => bold(alias)), ', ')}.`));
  }
  lines.push('.PP', text(syntax(sentence(cmd.description))));
  const subcommands = cmd.commands.filter((sub) => !sub.isHelp);
  if (subcommands.length > 0) {
    lines.push('.PP', text(t`Subcommands: ${join(subcommands.map((sub) => bold(sub.name)), ', ')}.`));
  }
  for (const arg of cmd.arguments) lines.push('.TP', text(italic(arg.term)), text(syntax(arg.description)));
  // Every command takes -h, --help; OPTIONS lists it once.
  for (const opt of cmd.options.filter((o) => !o.isHelp)) lines.push(...optionItem(opt));
  // As `--help` lists them under Global Options, and gh's pages as inherited flags.
  const inherited = globals.filter((o) => !o.isHelp).map((o) => bold(o.long ?? o.short!));
  lines.push('.PP', text(t`Inherited options (see ${bold('OPTIONS')}): ${join(inherited, ', ')}.`));
  for (const note of cmd.notes) lines.push('.PP', text(syntax(note)));
  if (cmd.examples.length > 0) lines.push('.PP', text(t`Examples:`), ...exampleBlock(cmd.examples));
  return lines;
}

function usageLines(cmd: CommandDoc): string[] {
  const usage = cmd.usage.trim();
  return [`.B ${quoted(cmd.path.join(' '))}`, ...(usage ? [text(syntax(usage))] : [])];
}

function optionItem(opt: OptionDoc): string[] {
  return ['.TP', text(syntax(opt.term)), text(syntax(opt.description))];
}

function exampleBlock(commandLines: string[]): string[] {
  return ['.RS 4', '.nf', ...commandLines.map((line) => text(escape(`$ ${line}`))), '.fi', '.RE'];
}

function environment(): string[] {
  return [
    '.SH ENVIRONMENT',
    ...ENVIRONMENT.flatMap(({ names, description }) => ['.TP', `.B ${quoted(names.join(', '))}`, text(syntax(sentence(description)))]),
  ];
}

function files(): string[] {
  return [
    '.SH FILES',
    '.TP',
    text(t`${italic('$SVC_CONFIG_DIR')}/config.json`),
    '.PD 0',
    '.TP',
    text(t`${italic('$XDG_CONFIG_HOME')}/svc/config.json`),
    '.TP',
    text(t`~/.config/svc/config.json`),
    '.PD',
    text(
      t`The config store, the first of these that applies: the profiles, each with its saved API key and service address.
        The key is kept in plain text, so the file is created with mode 0600 and its directory with mode 0700,
        and looser modes are tightened whenever svc opens it.
        Only ${bold('svc login')} writes a key there, after checking it against the server, and ${bold('svc logout')} removes it.
        The secrets that ${bold('svc keys create')} prints are never stored.`,
    ),
  ];
}

function exitStatus(): string[] {
  const codes: [ExitCode, Roff][] = [
    [
      ExitCode.ok,
      t`Success, including a request that changed nothing and ${bold('keys revoke --if-exists')} on a key that is already gone.`,
    ],
    [
      ExitCode.failure,
      t`Failure: a server error, a network error, an unexpected response, an endpoint the server does not offer, a new key whose secret svc could not find in the answer (printed on stdout), a new secret ${bold('--to-file')} or ${bold('--to-command')} could not deliver, or one standard output did not take (its key is revoked). For ${bold('keys audit')}: some key breaks the policy (or, with ${bold('--strict')}, could not be judged). For ${bold('scan')}: a live key was found (with ${bold('--revoke')}, one is still live).`,
    ],
    [
      ExitCode.usage,
      t`Usage: bad arguments, a base URL that is not an http(s) URL, a missing ${bold('--yes')} or name without a terminal, a malformed key, or a 400, 413 or 422 answer from the server.`,
    ],
    [ExitCode.unauthenticated, t`Not authenticated: no key configured, or the server answered 401.`],
    [ExitCode.notFound, t`Not found (404).`],
    [ExitCode.rateLimited, t`Rate limited past the ${bold('--max-wait')} budget, or at once with ${bold('--no-wait')}.`],
    [ExitCode.unfinished, t`${bold('keys audit')} and ${bold('scan')} only: the audit or scan could not finish (what is 1 for other commands: a server or network error, an unexpected answer, a key list that may be incomplete, git failing).`],
    [ExitCode.scanKeysNotLive, t`${bold('scan')} only: keys were found, and none of them is live.`],
    [ExitCode.scanKeysNotChecked, t`${bold('scan')} only: keys were found, none is known to be live, and some could not be checked (${bold('--no-verify')}, a rate limit past ${bold('--max-wait')}, the network).`],
    [ExitCode.forbidden, t`Forbidden: the server, or a gateway or firewall in front of it, answered 403. Trying again will not change it, unlike a server or network error (1).`],
    [
      ExitCode.hangUp,
      t`Stopped by SIGHUP. A signal's code is 128 + its number, whichever step it came in: once svc has done what the signal asks (finished the key in hand, shown a new key's secret, printed the ${bold('--json')} document), it dies by that signal rather than exit, so that a shell loop, ${bold('xargs')}, ${bold('make')} or a CI runner stops too; its shell still shows the code.`,
    ],
    [
      ExitCode.interrupted,
      t`Interrupted (Ctrl-C, SIGINT; Ctrl-C at a question too, which ends svc as SIGINT), or without a signal a question left with Esc or a confirmation answered No: nothing more was done. ${bold('svc serve')} instead stops cleanly and exits 0 on SIGINT.`,
    ],
    [ExitCode.terminated, t`Stopped by SIGTERM (a cancelled CI job, ${bold('kill')}); ${bold('svc serve')} instead stops cleanly and exits 0.`],
    [ExitCode.brokenPipe, t`The reader of standard output went away, as for a process stopped by SIGPIPE.`],
  ];
  return ['.SH EXIT STATUS', ...codes.flatMap(([code, what]) => ['.TP', `.B ${code}`, text(what)])];
}

function examples(root: CommandDoc): string[] {
  const steps: [Roff, string[]][] = [
    [t`Try everything offline: the reference server prints a key to log in with.`, ['svc serve --local', 'svc login']],
    [t`Create a key for a CI job; when piped, only the secret is printed.`, ['svc keys create ci --expires-in 30d > ci-key.txt']],
    [
      t`In the CI job, take the key from a secret, read JSON and rely on the exit status.`,
      [`SVC_API_KEY="$CI_SECRET" svc keys list --json --no-input | jq -r '.keys[].id'`],
    ],
    [t`Retire a key without a prompt, and without failing if it is already gone.`, ['svc keys revoke key_0123abcd --yes --if-exists']],
  ];
  return [
    '.SH EXAMPLES',
    ...(root.examples.length > 0 ? [...exampleBlock(root.examples), '.PP'] : []),
    ...steps.flatMap(([what, commandLines], i) => [...(i > 0 ? ['.PP'] : []), text(what), ...exampleBlock(commandLines)]),
  ];
}

/** roff source for text lines; the brand keeps raw strings from slipping in unescaped. */
type Roff = string & { readonly __roff: true };

/**
 * A template whose literal parts are plain text and whose values are
 * already roff. It may span source lines: they join with single spaces.
 */
function t(literals: TemplateStringsArray, ...values: Roff[]): Roff {
  return literals.reduce(
    (out, literal, i) => out + (values[i - 1] ?? '') + escape(literal.replace(/[ \t]*\n\s*/g, ' ')),
    '',
  ) as Roff;
}

function join(parts: Roff[], separator: string): Roff {
  return parts.join(escape(separator)) as Roff;
}

function bold(s: string): Roff {
  return `\\fB${escape(s)}\\fR` as Roff;
}

function italic(s: string): Roff {
  return `\\fI${escape(s)}\\fR` as Roff;
}

/**
 * Command-line syntax as commander writes it, in running text: options and
 * `commands` in bold, <placeholders> in italics, everything else escaped.
 */
function syntax(source: string): Roff {
  const token = /`([^`]+)`|<([^<>]+)>|\[([^[\]\s]+)\]|(?<![\w-])(--?[A-Za-z][\w-]*)/g;
  let out = '';
  let last = 0;
  for (const match of source.matchAll(token)) {
    const [whole, code, required, optional, flag] = match;
    out += escape(source.slice(last, match.index));
    // A `command` in help text is set in bold, as a man page shows commands; backticks would print as they are.
    if (code !== undefined) out += bold(code);
    else if (required !== undefined) out += italic(required);
    else if (optional !== undefined) out += `[${italic(optional)}]`;
    else out += bold(flag!);
    last = match.index + whole.length;
  }
  return (out + escape(source.slice(last))) as Roff;
}

/** A text line; one starting with '.' or "'" would be read as a request. */
function text(line: Roff): string {
  return /^[.']/.test(line) ? `\\&${line}` : line;
}

/** A quoted macro argument. */
function quoted(s: string): string {
  return `"${escape(s)}"`;
}

const NAMED: Record<string, string> = {
  '\\': '\\e',
  '-': '\\-',
  "'": '\\(aq',
  '`': '\\(ga',
  '~': '\\(ti',
  '^': '\\(ha',
  '"': '\\(dq',
};

/**
 * Literal text. Hyphens become \- so options copy and paste as ASCII;
 * ' ` ~ ^ would otherwise come out as typographic glyphs, and " would end a
 * macro argument; anything beyond ASCII is spelled as a Unicode escape,
 * since groff reads its input as Latin-1 unless told otherwise.
 */
function escape(s: string): Roff {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    out += NAMED[ch] ?? (code > 0x7e ? `\\[u${code.toString(16).toUpperCase().padStart(4, '0')}]` : ch);
  }
  return out as Roff;
}

function sentence(s: string): string {
  const trimmed = s.trim();
  const capitalised = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}
