/**
 * Masking of a secret svc handed out (docs/contract.md §C10): what a
 * command prints, with the secret replaced by what may be shown of it (its
 * hint, for a key of the service's form): the whole secret, whatever its
 * shape, and any piece of it of FRAGMENT characters or more (a line folded
 * at 40 columns, a header cut at 80, the secret less its last character),
 * also one split across writes. Masking goes by runs of the characters the
 * secret is made of: a run that ends a write is held back until the next
 * write (or the end) shows where it ends, but only when a piece of the
 * secret could still be in it. On GitHub Actions a line that registers a
 * value with the runner's own masking (`::add-mask::…`) passes as it is:
 * the runner takes it and logs none of it, and svc has registered the
 * secret itself before the command started (../terminal/ci-masking.ts).
 */
import { Transform } from 'node:stream';
import { isWellFormedKey, keyHint } from '../../contract/key-format.js';
import { ADD_MASK_LINE, onGitHubActions } from '../terminal/ci-masking.js';

/**
 * Shorter pieces pass: 11 characters of a 64-character key leave 53 to
 * guess. Of a secret shorter than twice that (a server's own shape), a
 * piece of half of it or more is masked (at least 4 characters, or the
 * whole of a shorter one): 9 of 10 characters shown would leave one to guess.
 */
const FRAGMENT = 12;
const LEAST_FRAGMENT = 4;

/** A run held back longer than this is let through but for its last secret's length, so no output waits for ever. */
const MOST_HELD = 4096;

/** How much of a line's start is kept across writes, to tell a runner's command line (ADD_MASK_LINE) by. */
const LINE_START_KEPT = 256;

/**
 * What stands for `secret` where it was masked: a key of the service's form
 * by its hint; anything else (a server that hands out another shape) by a
 * mark that shows none of it, since a hint of a short secret would be most of it.
 */
export function maskedForm(secret: string): string {
  return isWellFormedKey(secret) ? keyHint(secret) : '[secret]';
}

/** `env`: svc's environment, which says whether the runner of GitHub Actions reads the output (onGitHubActions). */
export function masking(secret: string, env: NodeJS.ProcessEnv = {}): Transform {
  // Bytes as latin1 characters, one for one: every byte passes unchanged, and a secret that is not ASCII is matched by its UTF-8 bytes.
  const wanted = Buffer.from(secret, 'utf8').toString('latin1');
  const shown = Buffer.from(maskedForm(secret), 'utf8').toString('latin1');
  const fragment = Math.min(FRAGMENT, Math.max(Math.ceil(wanted.length / 2), Math.min(LEAST_FRAGMENT, wanted.length)));
  const pieces = new Set<string>();
  for (let at = 0; at + fragment <= wanted.length; at++) pieces.add(wanted.slice(at, at + fragment));
  // A run is made of the characters a key is made of and those of this secret, whatever they are (a dash, a dot).
  const alphabet = `A-Za-z0-9_${[...new Set(wanted)].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}`;
  const run = new RegExp(`[${alphabet}]+`, 'g');
  const endRun = new RegExp(`[${alphabet}]*$`);
  const passesMaskCommands = onGitHubActions(env);
  // The start of the line that the data begins in, as far as earlier writes showed it: the runner reads the output line by line.
  let lineStart = '';
  const inMaskCommand = (text: string, at: number) => {
    const from = lineBreakBefore(text, at) + 1;
    return ADD_MASK_LINE.test(from === 0 ? lineStart + text.slice(0, at) : text.slice(from, at));
  };
  const mask = (text: string) => {
    const masked = text.replace(run, (found, at: number) =>
      found.length < fragment || (passesMaskCommands && inMaskCommand(text, at)) ? found : maskRun(found, pieces, fragment, shown),
    );
    const from = lineBreakBefore(text, text.length) + 1;
    lineStart = (from === 0 ? lineStart + text : text.slice(from)).slice(0, LINE_START_KEPT);
    return masked;
  };
  let held = '';
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const data = held + chunk.toString('latin1');
      const end = data.length - toHold(endRun.exec(data)![0], wanted);
      held = data.slice(end);
      done(null, Buffer.from(mask(data.slice(0, end)), 'latin1'));
    },
    flush(done) {
      done(null, Buffer.from(mask(held), 'latin1'));
    },
  });
}

/** Where the last line break (LF or CR: the runner ends a line at either) before `at` is in `text`; -1 when none is. */
function lineBreakBefore(text: string, at: number): number {
  if (at === 0) return -1;
  return Math.max(text.lastIndexOf('\n', at - 1), text.lastIndexOf('\r', at - 1));
}

/** Each stretch of `run` that pieces of the secret cover, replaced by `shown`. */
function maskRun(run: string, pieces: ReadonlySet<string>, fragment: number, shown: string): string {
  const covered = new Uint8Array(run.length);
  let found = false;
  for (let at = 0; at + fragment <= run.length; at++) {
    if (pieces.has(run.slice(at, at + fragment))) {
      covered.fill(1, at, at + fragment);
      found = true;
    }
  }
  if (!found) return run;
  let out = '';
  for (let at = 0; at < run.length; ) {
    if (covered[at] === 0) out += run[at++];
    else {
      while (at < run.length && covered[at] === 1) at++;
      out += shown;
    }
  }
  return out;
}

/**
 * How much of the end of the data waits for the next write: the run it
 * ends with, when a piece of the secret may go on from it into that write
 * (some end of the run is part of the secret). Otherwise no piece can
 * cover any of the run, whatever comes, and it is shown now.
 */
function toHold(run: string, secret: string): number {
  let tail = 0;
  for (let n = Math.min(run.length, secret.length); n > 0; n--) {
    if (secret.includes(run.slice(run.length - n))) {
      tail = n;
      break;
    }
  }
  if (tail === 0) return 0;
  return run.length <= MOST_HELD ? run.length : secret.length;
}
