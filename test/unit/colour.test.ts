// tier: in-process
import { describe, expect, it } from 'vitest';
import { colourLevel } from '../../src/cli/text/colour.js';

describe('the colour level of a stream (docs/contract.md, output)', () => {
  it.each([
    // [NO_COLOR, FORCE_COLOR, terminal, level]
    [undefined, undefined, true, 1],
    [undefined, undefined, false, 0],
    [undefined, '1', false, 1],
    [undefined, '2', false, 2],
    [undefined, '3', false, 3],
    [undefined, '9', false, 3],
    [undefined, '', false, 1],
    [undefined, 'true', false, 1],
    [undefined, '0', true, 0],
    [undefined, 'false', true, 0],
    [undefined, 'yes', false, 0],
    [undefined, 'yes', true, 1],
    [undefined, '-1', true, 1],
    ['1', '3', true, 0],
    ['1', undefined, true, 0],
    ['', '1', false, 1],
  ] as const)('NO_COLOR=%j FORCE_COLOR=%j on a terminal: %j → level %i', (noColor, forceColor, tty, level) => {
    expect(colourLevel(noColor, forceColor, tty)).toBe(level);
  });
});
