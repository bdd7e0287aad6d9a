import { checkbox, confirm, input, password, search, select } from '@inquirer/prompts';
import { InterruptedError } from './errors.js';
import type { IO } from './io.js';

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
  disabled?: boolean | string;
}

/** The questions commands may ask; prompts draw on stderr, never stdout. */
export interface Prompter {
  text(message: string, validate?: (value: string) => true | string): Promise<string>;
  secret(message: string, validate?: (value: string) => true | string): Promise<string>;
  confirm(message: string, defaultValue?: boolean): Promise<boolean>;
  select<T>(message: string, choices: Choice<T>[]): Promise<T>;
  /** A list filtered as the person types. */
  search<T>(message: string, choices: Choice<T>[]): Promise<T>;
  pickMany<T>(message: string, choices: Choice<T>[]): Promise<T[]>;
  /** A select that Esc or Ctrl-C leaves with null instead of an error: the way out of a menu. */
  menu<T>(message: string, choices: Choice<T>[]): Promise<T | null>;
}

export function createPrompter(io: IO): Prompter {
  const context = { input: io.stdin, output: io.stderr, clearPromptOnDone: false };
  return {
    text: (message, validate) => ask(input({ message, validate }, context)),
    secret: (message, validate) => ask(password({ message, mask: '*', validate }, context)),
    confirm: (message, defaultValue = false) => ask(confirm({ message, default: defaultValue }, context)),
    select: (message, choices) => ask(select({ message, choices, pageSize: 12, loop: false }, context)),
    search: (message, choices) =>
      ask(
        search(
          {
            message,
            pageSize: 12,
            source: (term) => {
              const needle = (term ?? '').toLowerCase();
              return choices.filter((c) => `${c.name} ${c.description ?? ''}`.toLowerCase().includes(needle));
            },
          },
          context,
        ),
      ),
    pickMany: (message, choices) => ask(checkbox({ message, choices, pageSize: 12, loop: false }, context)),
    async menu(message, choices) {
      const escape = new AbortController();
      const onKey = (_: unknown, key?: { name?: string }) => {
        if (key?.name === 'escape') escape.abort();
      };
      io.stdin.on('keypress', onKey);
      try {
        return await select({ message, choices, pageSize: 12, loop: true }, { ...context, signal: escape.signal });
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'AbortPromptError' || name === 'ExitPromptError') return null;
        throw error;
      } finally {
        io.stdin.off('keypress', onKey);
      }
    },
  };
}

/** Ctrl-C inside a prompt arrives as ExitPromptError; it means exit 130. */
async function ask<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    if ((error as Error).name === 'ExitPromptError') throw new InterruptedError();
    throw error;
  }
}
