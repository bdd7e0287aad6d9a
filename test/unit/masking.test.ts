// tier: in-process
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { masking } from '../../src/cli/child/mask.js';
import { keyHint } from '../../src/contract/key-format.js';

// svc run's masking (docs/contract.md §C10): COMMAND's stdout and stderr,
// each through a masking stream of its own, written in any pieces.

const SECRET = `sk_${'aB3'.repeat(21)}x`;
const HINT = keyHint(SECRET);

/** Writes `pieces` in order, each to its stream; resolves with what came out of each. */
async function through(pieces: readonly { stream: 0 | 1; text: string }[]): Promise<[string, string]> {
  const streams = [masking(SECRET, HINT), masking(SECRET, HINT)] as const;
  const outs = streams.map((stream) => {
    const sink = new PassThrough();
    stream.pipe(sink);
    const chunks: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    return new Promise<string>((resolve) => sink.on('end', () => resolve(Buffer.concat(chunks).toString())));
  });
  for (const { stream, text } of pieces) streams[stream].write(Buffer.from(text));
  for (const stream of streams) stream.end();
  const [out, err] = await Promise.all(outs);
  return [out!, err!];
}

/** `text` cut at each of `cuts` (sorted, in range). */
const cut = (text: string, cuts: number[]) => [0, ...cuts, text.length].slice(1).map((end, i, ends) => text.slice(i === 0 ? 0 : ends[i - 1], end));

describe('masking', () => {
  it('replaces the secret split into two writes at every offset', async () => {
    for (let at = 0; at <= SECRET.length; at++) {
      const text = `a ${SECRET} b`;
      const split = 2 + at;
      const [out] = await through([
        { stream: 0, text: text.slice(0, split) },
        { stream: 0, text: text.slice(split) },
      ]);
      expect(out, `split at ${at}`).toBe(`a ${HINT} b`);
    }
  });

  it('property: any text with secrets in it, cut anywhere on stdout and stderr alike, comes out with each secret replaced and nothing else changed', async () => {
    // Text around the secrets that is easily confused with them: its prefixes, the prefix letters, other text.
    const filler = fc.array(fc.constantFrom('s', 'k', '_', 'sk_', SECRET.slice(0, 10), SECRET.slice(0, SECRET.length - 1), 'a', ' ', '\n', 'é'), { maxLength: 6 }).map((parts) => parts.join(''));
    const streamText = fc.array(fc.tuple(filler, fc.boolean()), { maxLength: 5 }).map((parts) => parts.map(([text, secret]) => text + (secret ? SECRET : '')).join(''));
    const written = streamText.chain((text) =>
      fc.record({
        text: fc.constant(text),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 8 }).map((cuts) => cuts.filter((c) => c < text.length).sort((a, b) => a - b)),
      }),
    );
    await fc.assert(
      fc.asyncProperty(written, written, fc.array(fc.boolean(), { maxLength: 20 }), async (out, err, order) => {
        const pieces = { 0: cut(out.text, out.cuts), 1: cut(err.text, err.cuts) };
        // The two streams' writes interleaved as `order` says.
        const writes: { stream: 0 | 1; text: string }[] = [];
        let turn = 0;
        while (pieces[0].length + pieces[1].length > 0) {
          const stream: 0 | 1 = pieces[1].length === 0 || (pieces[0].length > 0 && !order[turn++ % Math.max(1, order.length)]) ? 0 : 1;
          writes.push({ stream, text: pieces[stream].shift()! });
        }
        const [shownOut, shownErr] = await through(writes);
        expect(shownOut).toBe(out.text.replaceAll(SECRET, HINT));
        expect(shownErr).toBe(err.text.replaceAll(SECRET, HINT));
        expect(shownOut + shownErr).not.toContain(SECRET);
      }),
      { numRuns: 300 },
    );
  });
});
