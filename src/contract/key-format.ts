export const KEY_PREFIX = 'sk_';
export const KEY_BODY_LENGTH = 64;
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}$`);

/** Not the tail of a longer word: `task_…` holds no key. */
const KEY_INSIDE = new RegExp(`(?<![A-Za-z0-9])${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}`);

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Glued to a word too (`abcsk_…`): what is shown hides anything that may be a key, where a refusal (keyIn) must not catch `task_…`. */
const KEYS_INSIDE = new RegExp(`${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}`, 'g');

/** `text` with every key in it replaced by its hint. */
export function hintKeys(text: string): string {
  return text.replace(KEYS_INSIDE, keyHint);
}

/** The first key in `text`, wherever it sits in it, or null. */
export function keyIn(text: string): string | null {
  return KEY_INSIDE.exec(text)?.[0] ?? null;
}

/**
 * `text` with every percent-escape of an ASCII character decoded, over and
 * over until none is left (`%2573` is `%73` is `s`), as a server that
 * decodes more than once would read it. Escapes of other bytes stay: no
 * character of a key needs one.
 */
export function asciiDecoded(text: string): string {
  let current = text;
  for (;;) {
    const next = current.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === current) return current;
    current = next;
  }
}

/** `sk_` + first 4 + `…` + last 4 of the body: enough to recognise, not to guess. */
export function keyHint(key: string): string {
  const body = key.startsWith(KEY_PREFIX) ? key.slice(KEY_PREFIX.length) : key;
  return `${KEY_PREFIX}${body.slice(0, 4)}\u2026${body.slice(-4)}`;
}
