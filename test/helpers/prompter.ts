import { PromptCancelledError } from '../../src/cli/errors/errors.js';
import type { Choice, MenuShape, Prompter } from '../../src/cli/terminal/prompt.js';

/** One question svc is expected to ask, and its answer. */
export type Step =
  | { menu: string | null } // the choice whose label contains this; null is Esc
  | { select: string }
  | { search: string }
  | { pickMany: string[] }
  | { text: string }
  | { secret: string }
  | { confirm: boolean }
  | { pause: true }
  /** Esc at whatever is asked next; 'ctrl-c', Ctrl-C (a key in the prompt's raw mode, which svc ends by as SIGINT). */
  | { cancel: true | 'ctrl-c' };

/**
 * Answers svc's prompts from a script, in order, as a person at a terminal
 * would; `asked` keeps every question with its choices, for assertions. A
 * question of another kind than the script's next step fails the test; a
 * menu once the script is done is left with Esc.
 */
export function scriptedPrompter(script: Step[]): Prompter & { asked: string[]; chosen: unknown[]; menus: MenuShape<unknown>[] } {
  const asked: string[] = [];
  /** The values the search and many-key lists answered with, in order. */
  const chosen: unknown[] = [];
  /** How each menu was to be drawn (rows of choices, its line of keys). */
  const menus: MenuShape<unknown>[] = [];
  const next = <K extends string>(kind: K, message: string, choices: Choice<unknown>[] = []) => {
    asked.push([message, ...choices.map((c) => `  ${c.name}`)].join('\n'));
    const step = script.shift();
    if (step === undefined && kind === 'menu') return { menu: null } as Record<K, unknown>;
    if (step !== undefined && 'cancel' in step) throw new PromptCancelledError(undefined, step.cancel === 'ctrl-c' ? 'SIGINT' : null);
    if (step === undefined || !(kind in step)) {
      throw new Error(`svc asked ${kind} "${message}", the script expected ${step ? Object.keys(step)[0] : 'nothing more'}`);
    }
    return step as Record<K, unknown>;
  };
  const pick = <T>(choices: Choice<T>[], label: string, message: string): T => {
    const found = choices.find((c) => c.name.includes(label) && !c.disabled);
    if (!found) throw new Error(`no choice containing "${label}" in "${message}": ${choices.map((c) => c.name).join(' | ')}`);
    return found.value;
  };
  return {
    asked,
    chosen,
    menus,
    async text(message, validate) {
      const value = next('text', message).text as string;
      const verdict = validate?.(value) ?? true;
      if (verdict !== true) throw new Error(`the scripted answer "${value}" to "${message}" is refused: ${verdict}`);
      return value;
    },
    async secret(message, validate) {
      const value = next('secret', message).secret as string;
      const verdict = validate?.(value) ?? true;
      if (verdict !== true) throw new Error(`the scripted secret to "${message}" is refused: ${verdict}`);
      return value;
    },
    async confirm(message) {
      return next('confirm', message).confirm as boolean;
    },
    async select(message, choices) {
      return pick(choices, next('select', message, choices).select as string, message);
    },
    async search(message, choices) {
      const value = pick(choices, next('search', message, choices).search as string, message);
      chosen.push(value);
      return value;
    },
    async pickMany(message, choices) {
      const values = (next('pickMany', message, choices).pickMany as string[]).map((label) => pick(choices, label, message));
      chosen.push(...values);
      return values;
    },
    async pause(message) {
      next('pause', message);
    },
    async menu(message, choices, shape = {}) {
      menus.push(shape as MenuShape<unknown>);
      const label = next('menu', message, choices).menu as string | null;
      return label === null ? null : pick(choices, label, message);
    },
  };
}
