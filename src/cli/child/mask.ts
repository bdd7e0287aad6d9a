/**
 * `svc run`'s masking (docs/contract.md §C10): what COMMAND prints, with
 * every occurrence of the secret replaced by its hint, also one split
 * across writes. The longest tail of what came so far that could begin the
 * secret is held back until the next write (or the end) shows whether it
 * does; nothing else waits.
 */
import { Transform } from 'node:stream';

export function masking(secret: string, hint: string): Transform {
  const needle = Buffer.from(secret);
  const replacement = Buffer.from(hint);
  let held: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const { shown, rest } = masked(held.length === 0 ? chunk : Buffer.concat([held, chunk]), needle, replacement);
      held = rest;
      done(null, shown);
    },
    flush(done) {
      done(null, held);
    },
  });
}

function masked(data: Buffer, needle: Buffer, replacement: Buffer): { shown: Buffer; rest: Buffer } {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = data.indexOf(needle); at !== -1; at = data.indexOf(needle, from)) {
    parts.push(data.subarray(from, at), replacement);
    from = at + needle.length;
  }
  const end = data.length - secretStart(data, from, needle);
  parts.push(data.subarray(from, end));
  return { shown: Buffer.concat(parts), rest: Buffer.from(data.subarray(end)) };
}

/**
 * How many of `data`'s last bytes (past `from`) are a proper prefix of
 * `needle`. The longest is the one to hold: any later match begins inside it.
 */
function secretStart(data: Buffer, from: number, needle: Buffer): number {
  for (let n = Math.min(needle.length - 1, data.length - from); n > 0; n--) {
    if (data.subarray(data.length - n).equals(needle.subarray(0, n))) return n;
  }
  return 0;
}
