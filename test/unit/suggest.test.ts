// tier: in-process
import { describe, expect, it } from 'vitest';
import { nearest } from '../../src/cli/domain/suggest.js';

const COMMANDS = [['login'], ['logout'], ['status'], ['keys'], ['list', 'ls'], ['revoke', 'rm'], ['rotate'], ['ping'], ['api'], ['serve']];

describe('nearest', () => {
  it.each([
    ['staus', ['status']],
    ['stauts', ['status']],
    ['key', ['keys']],
    ['lst', ['list']],
    ['lsit', ['list']],
    ['pign', ['ping']],
    ['stat', ['status']],
    ['STATUS', ['status']],
    ['logn', ['login']],
    ['frobnicate', []],
    ['x', []],
    ['', []],
  ])('%s → %j', (word, expected) => {
    expect(nearest(word, COMMANDS)).toEqual(expected);
  });

  it('names a command by its name when an alias is what was near', () => {
    expect(nearest('rn', COMMANDS)).toEqual(['revoke']);
  });

  it('offers every command at the same, least distance', () => {
    expect(nearest('logot', COMMANDS)).toEqual(['logout']);
    expect(nearest('log', [['login'], ['logout']])).toEqual(['login', 'logout']);
  });
});
