// tier: in-process
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskedForm, masking } from '../../src/cli/child/mask.js';
import { keyHint } from '../../src/contract/key-format.js';

// svc run's masking (docs/contract.md §C10): COMMAND's stdout and stderr,
// each through a masking stream of its own, written in any pieces.

const SECRET = `sk_${'aB3'.repeat(21)}x`;
const HINT = keyHint(SECRET);

/** Writes `pieces` in order, each to its stream; resolves with what came out of each. */
async function through(pieces: readonly { stream: 0 | 1; text: string }[]): Promise<[string, string]> {
  const streams = [masking(SECRET), masking(SECRET)] as const;
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

  it('replaces the pieces of the secret a command cuts it into (fold, cut) and the secret less a character', async () => {
    const [out] = await through([{ stream: 0, text: `${SECRET.slice(0, 40)}\n${SECRET.slice(40)}\n${`Authorization: Bearer ${SECRET}`.slice(0, 80)}\n${SECRET.slice(0, -1)}\n` }]);
    expect(out).toBe(`${HINT}\n${HINT}\nAuthorization: Bearer ${HINT}\n${HINT}\n`);
    // A piece too short to matter passes: 11 characters of 64 leave 53 to guess.
    const [short] = await through([{ stream: 0, text: `id ${SECRET.slice(20, 31)} ok` }]);
    expect(short).toBe(`id ${SECRET.slice(20, 31)} ok`);
  });

  it('property: text cut anywhere on stdout and stderr alike comes out as it does in one write, with no piece of the secret of 12 characters or more, and text without one unchanged', async () => {
    // Text around the secrets that is easily confused with them: its prefixes and pieces, the prefix letters, other text.
    const filler = fc
      .array(fc.constantFrom('s', 'k', '_', 'sk_', SECRET.slice(0, 10), SECRET.slice(0, SECRET.length - 1), SECRET.slice(30, 45), 'a', 'B3', ' ', '\n', 'é'), { maxLength: 6 })
      .map((parts) => parts.join(''));
    const streamText = fc.array(fc.tuple(filler, fc.boolean()), { maxLength: 5 }).map((parts) => parts.map(([text, secret]) => text + (secret ? SECRET : '')).join(''));
    const written = streamText.chain((text) =>
      fc.record({
        text: fc.constant(text),
        cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 8 }).map((cuts) => cuts.filter((c) => c < text.length).sort((a, b) => a - b)),
      }),
    );
    const pieces = Array.from({ length: SECRET.length - 11 }, (_, at) => SECRET.slice(at, at + 12));
    const hasPiece = (text: string) => pieces.some((piece) => text.includes(piece));
    await fc.assert(
      fc.asyncProperty(written, written, fc.array(fc.boolean(), { maxLength: 20 }), async (out, err, order) => {
        const cutUp = { 0: cut(out.text, out.cuts), 1: cut(err.text, err.cuts) };
        // The two streams' writes interleaved as `order` says.
        const writes: { stream: 0 | 1; text: string }[] = [];
        let turn = 0;
        while (cutUp[0].length + cutUp[1].length > 0) {
          const stream: 0 | 1 = cutUp[1].length === 0 || (cutUp[0].length > 0 && !order[turn++ % Math.max(1, order.length)]) ? 0 : 1;
          writes.push({ stream, text: cutUp[stream].shift()! });
        }
        const [shownOut, shownErr] = await through(writes);
        const [wholeOut, wholeErr] = await through([
          { stream: 0, text: out.text },
          { stream: 1, text: err.text },
        ]);
        expect(shownOut).toBe(wholeOut);
        expect(shownErr).toBe(wholeErr);
        expect(hasPiece(shownOut) || hasPiece(shownErr)).toBe(false);
        if (!hasPiece(out.text)) expect(shownOut).toBe(out.text);
        if (!hasPiece(err.text)) expect(shownErr).toBe(err.text);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a secret of any shape (short, dashed, dotted) is masked whole and in pieces wherever it is cut, and text without a piece of it passes unchanged', async () => {
    const secretChars = fc.constantFrom(...'abcXYZ019-._~+/='.split(''));
    const anySecret = fc.array(secretChars, { minLength: 1, maxLength: 80 }).map((chars) => chars.join(''));
    await fc.assert(
      fc.asyncProperty(
        anySecret,
        fc.array(fc.tuple(fc.constantFrom('', ' ', 'a', '-', 'x.', '\n', 'ab-'), fc.boolean()), { maxLength: 5 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 8 }),
        async (secret, parts, cutsAt) => {
          const text = parts.map(([filler, withSecret]) => filler + (withSecret ? secret : '')).join('');
          const fragment = Math.min(12, Math.max(Math.ceil(secret.length / 2), Math.min(4, secret.length)));
          const pieces = Array.from({ length: secret.length - fragment + 1 }, (_, at) => secret.slice(at, at + fragment));
          const stream = masking(secret);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          const ended = new Promise<string>((resolve) => stream.on('end', () => resolve(Buffer.concat(chunks).toString())));
          for (const piece of cut(text, cutsAt.filter((c) => c < text.length).sort((a, b) => a - b))) stream.write(Buffer.from(piece));
          stream.end();
          const shown = await ended;
          // The mark itself may hold the secret's characters (a secret `c`): what is looked at is the text between marks.
          const between = shown.split(maskedForm(secret));
          expect(between.some((part) => pieces.some((piece) => part.includes(piece)))).toBe(false);
          if (!pieces.some((piece) => text.includes(piece))) expect(shown).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a secret not of the service\'s form is shown as a mark that gives none of it away; a key by its hint', async () => {
    expect(maskedForm(SECRET)).toBe(HINT);
    for (const secret of ['0123456789', 'abcd-efgh-ijkl-mnop-qrst']) {
      const stream = masking(secret);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.end(Buffer.from(`key=${secret};`));
      await new Promise((resolve) => stream.on('end', resolve));
      expect(Buffer.concat(chunks).toString()).toBe('key=[secret];');
    }
  });

  it('of a short secret, a piece of half of it or more is masked: the secret less a character leaves nothing to guess', async () => {
    const secret = 'Q1zX9pLmK7';
    const stream = masking(secret);
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.end(Buffer.from(`${secret.slice(0, -1)} ${secret.slice(1)} ${secret.slice(0, 5)}\n${secret.slice(5)} ${secret.slice(0, 4)}`));
    await new Promise((resolve) => stream.on('end', resolve));
    expect(Buffer.concat(chunks).toString()).toBe(`[secret] [secret] [secret]\n[secret] ${secret.slice(0, 4)}`);
  });
});


describe('masking on GitHub Actions (a line that registers a value with the runner passes whole)', () => {
  const ACTIONS = { GITHUB_ACTIONS: 'true' };
  const shownBy = async (text: string, env: NodeJS.ProcessEnv, cuts: number[] = []) => {
    const stream = masking(SECRET, env);
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<string>((resolve) => stream.on('end', () => resolve(Buffer.concat(chunks).toString())));
    for (const piece of cut(text, cuts)) stream.write(Buffer.from(piece));
    stream.end();
    return ended;
  };

  it("keeps the command's own ::add-mask:: line, cut anywhere, and masks the secret on every other line", async () => {
    const text = `  ::add-mask::${SECRET}\nplain ${SECRET}\n::add-mask::${SECRET}`;
    for (let at = 1; at < text.length; at++) {
      expect(await shownBy(text, ACTIONS, [at]), `cut at ${at}`).toBe(`  ::add-mask::${SECRET}\nplain ${HINT}\n::add-mask::${SECRET}`);
    }
  });

  it('masks it as any line anywhere else, and every line that is not the exact command (the runner reads CR as a line break)', async () => {
    expect(await shownBy(`::add-mask::${SECRET}\n`, {})).toBe(`::add-mask::${HINT}\n`);
    expect(await shownBy(`::add-mask::${SECRET}\n`, { GITHUB_ACTIONS: 'false', CI: 'true' })).toBe(`::add-mask::${HINT}\n`);
    for (const line of [`x ::add-mask::${SECRET}`, `::ADD-MASK::${SECRET}`, `::add-mask x=1::${SECRET}`, `::add-mask::x\r${SECRET}`, `echo\t::add-mask:${SECRET}`]) {
      expect(await shownBy(line, ACTIONS)).toBe(line.replace(SECRET, HINT));
    }
  });
});
