/**
 * `svc run`'s masking (docs/contract.md §C10): what COMMAND prints, with
 * the secret replaced by its hint: the whole secret, and any piece of it
 * of FRAGMENT characters or more (a line folded at 40 columns, a header
 * cut at 80, the secret less its last character), also one split across
 * writes. Masking goes by runs of the characters a key is made of: a run
 * that ends a write is held back until the next write (or the end) shows
 * where it ends, but only when a piece of the secret could still be in it.
 */
import { Transform } from 'node:stream';

/** Shorter pieces pass: 11 characters of a 64-character key leave 53 to guess. */
const FRAGMENT = 12;

/** A run held back longer than this is let through but for its last secret's length, so no output waits for ever. */
const MOST_HELD = 4096;

const RUN = /[A-Za-z0-9_]+/g;

export function masking(secret: string, hint: string): Transform {
  const pieces = new Set<string>();
  for (let at = 0; at + FRAGMENT <= secret.length; at++) pieces.add(secret.slice(at, at + FRAGMENT));
  // Bytes as latin1 characters, one for one: a key is ASCII, and every other byte passes unchanged; the hint (its `…`) as its UTF-8 bytes.
  const shownHint = Buffer.from(hint, 'utf8').toString('latin1');
  const mask = (text: string) => text.replace(RUN, (run) => (run.length < FRAGMENT ? run : maskRun(run, pieces, shownHint)));
  let held = '';
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const data = held + chunk.toString('latin1');
      const end = data.length - toHold(data, secret);
      held = data.slice(end);
      done(null, Buffer.from(mask(data.slice(0, end)), 'latin1'));
    },
    flush(done) {
      done(null, Buffer.from(mask(held), 'latin1'));
    },
  });
}

/** Each stretch of `run` that pieces of the secret cover, replaced by the hint. */
function maskRun(run: string, pieces: ReadonlySet<string>, hint: string): string {
  const covered = new Uint8Array(run.length);
  let found = false;
  for (let at = 0; at + FRAGMENT <= run.length; at++) {
    if (pieces.has(run.slice(at, at + FRAGMENT))) {
      covered.fill(1, at, at + FRAGMENT);
      found = true;
    }
  }
  if (!found) return run;
  let shown = '';
  for (let at = 0; at < run.length; ) {
    if (covered[at] === 0) shown += run[at++];
    else {
      while (at < run.length && covered[at] === 1) at++;
      shown += hint;
    }
  }
  return shown;
}

/**
 * How much of the end of `data` waits for the next write: the run it ends
 * with, when a piece of the secret may go on from it into that write (some
 * end of the run is part of the secret). Otherwise no piece can cover any
 * of the run, whatever comes, and it is shown now.
 */
function toHold(data: string, secret: string): number {
  const run = /[A-Za-z0-9_]*$/.exec(data)![0];
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
