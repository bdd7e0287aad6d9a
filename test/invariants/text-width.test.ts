// tier: in-process
/**
 * `svc status` and `svc keys ping` on a terminal go through the renderer's
 * wrapping, as messages do (issue 39, 4): broken between words at the
 * terminal's width, never inside a word (`this minut` / `e (resets…`);
 * piped, each line whole, as scripts grep it.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
/** White space folded and numbers (latency, requests left, seconds to the reset) made alike, so two runs compare. */
const words = (text: string) => text.trim().replace(/\s+/g, ' ').replace(/\d+/g, 'N');
const width = (line: string) => [...line].length;

describe.each([60, 120])('at %i columns', (columns) => {
  it.each([
    [['status'], 12],
    [['keys', 'ping'], 2],
  ])('%j fits the width, breaks no word, and goes on under its value', async (args, indent) => {
    const tty = await svc(args, local.env, { tty: true, columns });
    expect(tty.exitCode, tty.stderr).toBe(0);
    const piped = await svc(args, local.env);
    const lines = tty.stdout.split('\n');
    for (const line of lines) expect(width(line) <= columns || !line.trim().includes(' '), line).toBe(true);
    expect(words(tty.stdout)).toBe(words(piped.stdout));
    // Piped, one line a field (or the one ping line), whatever the width.
    expect(piped.stdout.split('\n')).toHaveLength(args[0] === 'status' ? 7 : 1);
    for (const [i, line] of lines.entries()) {
      if (i > 0 && !/^\S/.test(line) && (args[0] !== 'status' || !/^[A-Z][a-z ]+: /.test(line))) expect(line.startsWith(' '.repeat(indent)), line).toBe(true);
    }
    if (columns === 60) expect(lines.length).toBeGreaterThan(piped.stdout.split('\n').length);
    // At 120 the lines that fit stay whole. The two runs' numbers differ (a latency of 9 ms in one, 1234 ms in the
    // other on a loaded machine; seconds to the reset), so a line is known to fit only with room for them to grow.
    else if (piped.stdout.split('\n').every((line) => width(line) <= columns - 8)) expect(lines).toHaveLength(piped.stdout.split('\n').length);
  });
});
