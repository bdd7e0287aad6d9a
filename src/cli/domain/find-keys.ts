/**
 * Where text holds a key (docs/contract.md §C11): `sk_` and 64 characters
 * of [A-Za-z0-9], each of them as itself, as a JSON `\u00XX` escape or as
 * a percent-escape `%XX`, not glued to a letter or digit on either side. A
 * key cannot cross a line: one split across lines is not found. The text
 * is bytes as Latin-1 (one character a byte), so that any file, valid
 * UTF-8 or not, is read the same and offsets are byte offsets.
 */
import { createHash } from 'node:crypto';
import { isWellFormedKey, KEY_BODY_LENGTH, keyHint } from '../../contract/key-format.js';

/** One character of a key: itself, or its JSON or percent escape (any ASCII escape: what it decodes to is checked after). */
const CHAR = String.raw`(?:[A-Za-z0-9]|\\u00[3-7][0-9A-Fa-f]|%[3-7][0-9A-Fa-f])`;
const PREFIX = String.raw`(?:s|\\u0073|%73)(?:k|\\u006[Bb]|%6[Bb])(?:_|\\u005[Ff]|%5[Ff])`;
/**
 * Before a key: no letter or digit, unless it ends an escape that stands
 * for a separator, as a log writes them: a terminal's colour (`\x1b[31m`,
 * or in JSON `\u001b[31m`), a JSON `\n`, `\t`, `\r`, or a percent-escape
 * (`%0A`, `%20`). A person reading the log sees the key there.
 */
const SEPARATED = String.raw`(?:(?<![A-Za-z0-9])|(?<=(?:\x1b|\\u001[bB]|\\x1[bB]|\\e)\[[0-9;]*m)|(?<=\\[nrtbf])|(?<=%[0-9A-Fa-f]{2}))`;
const FOUND = new RegExp(`${SEPARATED}${PREFIX}${CHAR}{${KEY_BODY_LENGTH}}(?![A-Za-z0-9])`, 'g');

const PLAIN_PREFIX = Buffer.from('sk_', 'latin1');
const JSON_ESCAPE = Buffer.from('\\u00', 'latin1');
const PERCENT = 0x25;

/** The longest text one key can take (every character a six-byte escape): where a stream is cut, this much is read again. */
export const LONGEST_KEY_TEXT = (3 + KEY_BODY_LENGTH) * 6;

/** Put on the line of a key that is meant to be there (a test fixture): that key is not reported there. */
const MARKER = /svc-scan:\s*ignore/;

export interface FoundKey {
  key: string;
  /** Where in the text searched its first character is. */
  offset: number;
  /** 1-based. */
  line: number;
  /** 1-based, in characters of the line as UTF-8 (UTF-16 code units, as SARIF counts them by default). */
  column: number;
  /** Characters the key's text takes on its line, escapes included. */
  length: number;
  /** The key's text was escaped in part or whole. */
  escaped: boolean;
  /** The line carries `svc-scan: ignore`. */
  marked: boolean;
  /** Up to 40 characters of the line either side of the key, every key in it shown by its hint: raw text, for the renderer to sanitise. */
  context: string;
}

/** Whether `bytes` may hold a key at all: a cheap look before any text is made of them. */
export function mayHoldKey(bytes: Buffer): boolean {
  return bytes.indexOf(PLAIN_PREFIX) !== -1 || mayHoldEscapes(bytes);
}

/** Whether `bytes` may hold a key with a character escaped: a `\u00`, or a `%` before 3 to 7 (what a key's characters encode to). */
export function mayHoldEscapes(bytes: Buffer): boolean {
  if (bytes.indexOf(JSON_ESCAPE) !== -1) return true;
  for (let at = bytes.indexOf(PERCENT); at !== -1; at = bytes.indexOf(PERCENT, at + 1)) {
    const next = bytes[at + 1];
    if (next !== undefined && next >= 0x33 && next <= 0x37) return true;
  }
  return false;
}

/** 1 for the bytes a key's body is made of. */
const KEY_BYTE = new Uint8Array(256);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') KEY_BYTE[char.charCodeAt(0)] = 1;
const STRIDE = KEY_BODY_LENGTH / 2;
const [S, K, UNDERSCORE] = [0x73, 0x6b, 0x5f];

const HEX = new Uint8Array(256);
for (const char of '0123456789ABCDEFabcdef') HEX[char.charCodeAt(0)] = 1;
const [BACKSLASH, PERCENT_SIGN, BRACKET, ESC] = [0x5c, 0x25, 0x5b, 0x1b];

/** Whether a key at `s` is not glued to what comes before: SEPARATED, for bytes. */
function separatedAt(bytes: Buffer, s: number): boolean {
  if (s === 0 || KEY_BYTE[bytes[s - 1]!] === 0) return true;
  if (s >= 2 && bytes[s - 2] === BACKSLASH && 'nrtbf'.includes(String.fromCharCode(bytes[s - 1]!))) return true;
  if (s >= 3 && bytes[s - 3] === PERCENT_SIGN && HEX[bytes[s - 2]!] === 1 && HEX[bytes[s - 1]!] === 1) return true;
  if (bytes[s - 1] !== 0x6d) return false;
  let j = s - 2;
  while (j >= 0 && ((bytes[j]! >= 0x30 && bytes[j]! <= 0x39) || bytes[j] === 0x3b)) j--;
  if (j < 1 || bytes[j] !== BRACKET) return false;
  if (bytes[j - 1] === ESC) return true;
  const before = bytes.toString('latin1', Math.max(0, j - 6), j);
  return /(?:\\u001[bB]|\\x1[bB]|\\e)$/.test(before);
}

/**
 * Where a plain key starts in `bytes` (its `s`), found without looking at
 * every byte: a key's body is 64 key bytes in a row, so it holds at least
 * one of every 32nd byte, and only the runs of key bytes through those are
 * measured. Text dense with `sk_` (task_queue, disk_free) then costs what
 * text without it does: over 20,000 files of bench/scan-tree.mjs's tree,
 * 2.85 million `sk_` among them, 154 ms where a Buffer.indexOf at each
 * `sk_` took 610 ms and a regular expression over the text 641 ms.
 */
export function plainKeyStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  const n = bytes.length;
  for (let i = STRIDE - 1; i < n; i += STRIDE) {
    if (KEY_BYTE[bytes[i]!] === 0) continue;
    let start = i;
    while (start > 0 && KEY_BYTE[bytes[start - 1]!] === 1) start--;
    let end = i + 1;
    while (end < n && KEY_BYTE[bytes[end]!] === 1) end++;
    const s = start - 3;
    if (end - start === KEY_BODY_LENGTH && s >= 0 && bytes[s] === S && bytes[s + 1] === K && bytes[s + 2] === UNDERSCORE && separatedAt(bytes, s)) starts.push(s);
    // On from the first 32nd byte past this run.
    i = Math.max(i, end - 1 - ((end - 1 - (STRIDE - 1)) % STRIDE));
  }
  return starts;
}

/**
 * The keys in `text` (bytes as Latin-1) that start at or after `from`,
 * `firstLine` being the line number of its first character and
 * `firstColumn` the columns of that line before it (a stream cut inside a line).
 */
export function findKeys(text: string, firstLine = 1, from = 0, firstColumn = 0): FoundKey[] {
  const found: FoundKey[] = [];
  FOUND.lastIndex = from;
  let line = firstLine;
  let counted = 0;
  for (let match = FOUND.exec(text); match !== null; match = FOUND.exec(text)) {
    const raw = match[0];
    const key = raw.length === 3 + KEY_BODY_LENGTH ? raw : unescaped(raw);
    if (!isWellFormedKey(key)) continue;
    line += newlinesBetween(text, counted, match.index);
    counted = match.index;
    const start = text.lastIndexOf('\n', match.index - 1) + 1;
    const newline = text.indexOf('\n', match.index);
    const end = newline === -1 ? text.length : newline;
    found.push({
      key,
      offset: match.index,
      line,
      column: utf8(text.slice(start, match.index)).length + 1 + (line === firstLine ? firstColumn : 0),
      length: raw.length,
      escaped: raw !== key,
      marked: MARKER.test(text.slice(start, end)),
      context: contextOf(text, start, match.index, match.index + raw.length, end),
    });
  }
  return found;
}

export function newlinesBetween(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

function unescaped(raw: string): string {
  return raw.replace(/\\u00([0-7][0-9A-Fa-f])|%([0-7][0-9A-Fa-f])/g, (_, json: string | undefined, percent: string | undefined) =>
    String.fromCharCode(Number.parseInt(json ?? percent!, 16)),
  );
}

/** The columns `latin1` (bytes as Latin-1) takes as UTF-8 text, in UTF-16 code units. */
export function columnsOf(latin1: string): number {
  return utf8(latin1).length;
}

function utf8(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}

const AROUND = 40;

/**
 * The line around a key: every key on it as its hint, then up to AROUND
 * characters either side, then every run of 16 or more characters that
 * could be part of a key cut to its first 4, so that no part of a secret
 * cut by the window shows.
 */
function contextOf(text: string, lineStart: number, keyStart: number, keyEnd: number, lineEnd: number): string {
  const before = utf8(hinted(text.slice(lineStart, keyStart)));
  const after = utf8(hinted(text.slice(keyEnd, lineEnd)));
  const key = text.slice(keyStart, keyEnd);
  const head = [...before].slice(-AROUND).join('');
  const tail = [...after].slice(0, AROUND).join('');
  return `${head.length < before.length ? '…' : ''}${cutRuns(head)}${keyHint(decoded(key))}${cutRuns(tail)}${tail.length < after.length ? '…' : ''}`;
}

function decoded(raw: string): string {
  return raw.length === 3 + KEY_BODY_LENGTH ? raw : unescaped(raw);
}

/** Every key in `text` as its hint. */
function hinted(text: string): string {
  return text.replace(new RegExp(FOUND.source, 'g'), (raw) => {
    const key = decoded(raw);
    return isWellFormedKey(key) ? keyHint(key) : raw;
  });
}

function cutRuns(text: string): string {
  return text.replace(/[A-Za-z0-9%\\]{16,}/g, (run) => `${run.slice(0, 4)}…`);
}

/**
 * What an ignore file holds for a key: a digest of it, never the key, and
 * not the bare SHA-256 the service keeps of it either, so that the file
 * names the key to svc alone.
 */
export function fingerprint(key: string): string {
  return createHash('sha256').update(`svc-scan-ignore-v1\0${key}`).digest('hex');
}
