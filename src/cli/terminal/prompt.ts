import { confirm, input, password, select } from '@inquirer/prompts';
import { PromptCancelledError } from '../errors/errors.js';
import type { IO } from './io.js';
import { sanitize } from '../text/text.js';
import { displayWidth, fit } from '../text/width.js';
import { listPrompt, type SearchConfig } from './search-prompt.js';

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
  disabled?: boolean | string;
  /** Words that, typed whole into a search list, put this row before the rows they are only part of (a key's name and id). */
  exact?: readonly string[];
}

/**
 * The questions commands may ask; prompts draw on stderr, never stdout.
 * Esc or Ctrl-C in any of them is a PromptCancelledError, never an answer:
 * a caller that wants a default must be given one by the person.
 */
export interface Prompter {
  text(message: string, validate?: (value: string) => true | string): Promise<string>;
  secret(message: string, validate?: (value: string) => true | string): Promise<string>;
  confirm(message: string, defaultValue?: boolean): Promise<boolean>;
  select<T>(message: string, choices: Choice<T>[]): Promise<T>;
  /** A list filtered as the person types. */
  search<T>(message: string, choices: Choice<T>[]): Promise<T>;
  pickMany<T>(message: string, choices: Choice<T>[]): Promise<T[]>;
  /**
   * Waits for Enter, whatever else is typed: what is on screen stays there
   * until the person is done with it. `until` withdraws the question (it
   * then fails as Esc would: PromptCancelledError with no signal), to be
   * asked again in other words.
   */
  pause(message: string, until?: AbortSignal): Promise<void>;
  /** A select that Esc or Ctrl-C leaves with null instead of an error, and clears from the screen: the way out of a menu. */
  menu<T>(message: string, choices: Choice<T>[], shape?: MenuShape<T>): Promise<T | null>;
}

export interface MenuShape<T> {
  defaultValue?: T;
  /** Rows of choices shown at once (12); the list scrolls through the rest. */
  pageSize?: number;
  /** The line of keys below the choices (and the blank row above it); false on a terminal too short for it. */
  help?: boolean;
  /** Withdraws the menu, which then answers null as Esc does: the screen is to be drawn again (a resize). */
  until?: AbortSignal;
  /** Told of the choice under the cursor each time it moves, so that a menu drawn again can start where the person left it. */
  onMove?: (value: T) => void;
}

type Context = { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; clearPromptOnDone: boolean; signal?: AbortSignal };

/**
 * The prompter svc asks with: inquirer's prompts on the terminal (the
 * search list svc's own, on inquirer's core: search-prompt.ts), behind
 * `escaped`.
 */
export function createPrompter(io: IO): Prompter {
  return escaped(inquirerPrompter(io));
}

/**
 * What a question shows may come from a server (a key's name in "Revoke
 * …?", the keys of a pick-list): every message, choice, description and
 * validation verdict is escaped like everything else drawn
 * (docs/contract.md §C3), whoever answers the questions. Answers and the
 * choices' values pass unchanged.
 */
export function escaped(prompter: Prompter): Prompter {
  return {
    text: (message, validate) => prompter.text(sanitize(message), escapedVerdicts(validate)),
    secret: (message, validate) => prompter.secret(sanitize(message), escapedVerdicts(validate)),
    confirm: (message, defaultValue) => prompter.confirm(sanitize(message), defaultValue),
    select: (message, choices) => prompter.select(sanitize(message), clean(choices)),
    search: (message, choices) => prompter.search(sanitize(message), clean(choices)),
    pickMany: (message, choices) => prompter.pickMany(sanitize(message), clean(choices)),
    pause: (message, until) => prompter.pause(sanitize(message), until),
    menu: (message, choices, shape) => prompter.menu(sanitize(message), clean(choices), shape),
  };
}

function clean<T>(choices: Choice<T>[]): Choice<T>[] {
  return choices.map((c) => ({
    ...c,
    name: sanitize(c.name),
    ...(c.description === undefined ? {} : { description: sanitize(c.description) }),
    ...(typeof c.disabled === 'string' ? { disabled: sanitize(c.disabled) } : {}),
  }));
}

function escapedVerdicts(validate?: (value: string) => true | string): ((value: string) => true | string) | undefined {
  if (validate === undefined) return undefined;
  return (value) => {
    const verdict = validate(value);
    return verdict === true ? true : sanitize(verdict);
  };
}

function inquirerPrompter(io: IO): Prompter {
  const context: Context = { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
  const ask = <T>(start: (context: Context) => Promise<T>, until?: AbortSignal) =>
    escapable(io, (signal) => start({ ...context, signal: until ? AbortSignal.any([signal, until]) : signal }));
  return {
    text: (message, validate) => ask((c) => input({ message, validate }, c)),
    secret: (message, validate) => ask((c) => password({ message, mask: '*', validate }, c)),
    confirm: (message, defaultValue = false) => ask((c) => confirm({ message, default: defaultValue }, c)),
    select: (message, choices) => ask((c) => select({ message, choices, pageSize: pageFor(io, choices), loop: false }, c)),
    // One list for one key and for several: the same rows, hint and keys (search-prompt.ts).
    search: async (message, choices) => (await ask((c) => listPrompt({ message, choices, many: false, ...listLayout(io) }, c)))[0]!,
    pickMany: (message, choices) => ask((c) => listPrompt({ message, choices, many: true, ...listLayout(io) }, c)),
    // Esc must not skip past a secret still on screen: only Enter (or Ctrl-C) goes on.
    pause: async (message, until) => {
      await escapable(io, () => input({ message, transformer: () => '' }, { ...context, clearPromptOnDone: true, ...(until ? { signal: until } : {}) }), false);
    },
    async menu(message, choices, { defaultValue, pageSize = 12, help = true, until, onMove } = {}) {
      // select tells nobody where its cursor is, but draws the description of the row under it at every move: each
      // choice's description is its index, read back here and drawn as nothing (menu choices carry no description).
      const tracked = choices.map((choice, index) => ({ ...choice, description: String(index) }));
      const description = (index: string) => {
        onMove?.(choices[Number(index)]!.value);
        return '';
      };
      // An empty tip leaves out its line and the blank row above it.
      const style = help ? { description } : { description, keysHelpTip: () => '' };
      try {
        return await ask(
          (c) => select({ message, choices: tracked, default: defaultValue, pageSize, loop: true, theme: { style } }, { ...c, clearPromptOnDone: true }),
          until,
        );
      } catch (error) {
        if (error instanceof PromptCancelledError) return null;
        throw error;
      }
    },
  };
}

/** Lines a list takes besides its rows: the question, a blank, the row's description, the keys' help, and the line below. */
const AROUND_ROWS = 5;

/**
 * How many rows of a list are shown at once (at most 12): as many as fit
 * the terminal with the lines around them, each row counted as the lines
 * it wraps to at the terminal's width. A list taller than the terminal
 * scrolls it, and each key pressed then leaves a copy in the scrollback.
 */
function pageFor<T>(io: IO, choices: readonly Choice<T>[]): number {
  const widest = Math.max(1, ...choices.map((choice) => displayWidth(choice.name) + 2));
  const linesPerRow = Math.ceil(widest / Math.max(1, io.columns));
  return Math.max(1, Math.min(12, Math.floor((io.rows - AROUND_ROWS) / linesPerRow)));
}

/**
 * How svc's own list (search-prompt.ts) fits the
 * terminal, read at each drawing: each row cut to one line of its width
 * (the pointer and mark take three columns), and as many rows as fit with
 * the lines around them (at most 12).
 */
function listLayout(io: IO): Pick<SearchConfig<unknown>, 'pageSize' | 'fit' | 'onResize'> {
  return {
    pageSize: () => Math.max(1, Math.min(12, io.rows - AROUND_ROWS)),
    fit: (name) => fit(name, Math.max(1, io.columns - 4)).text,
    ...(io.onResize ? { onResize: io.onResize } : {}),
  };
}

/**
 * Runs a prompt that Esc (when `byEscape`) or Ctrl-C withdraws: both come
 * back as PromptCancelledError, Ctrl-C's with SIGINT, which svc then ends
 * by. Inquirer knows Ctrl-C (ExitPromptError, the key in raw mode); Esc it
 * leaves to the caller, through an abort signal.
 */
async function escapable<T>(io: IO, start: (signal: AbortSignal) => Promise<T>, byEscape = true): Promise<T> {
  const escape = new AbortController();
  const onKey = (_: unknown, key?: { name?: string }) => {
    if (key?.name === 'escape') escape.abort();
  };
  if (byEscape) io.stdin.on('keypress', onKey);
  try {
    return await start(escape.signal);
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'AbortPromptError') throw new PromptCancelledError();
    if (name === 'ExitPromptError') throw new PromptCancelledError(undefined, 'SIGINT');
    throw error;
  } finally {
    io.stdin.off('keypress', onKey);
  }
}
