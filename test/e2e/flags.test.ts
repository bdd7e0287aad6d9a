// tier: process
/**
 * Issue 25's loose ends where only a process or a real terminal shows
 * them: FORCE_COLOR into a pipe and on a terminal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, svc, tempConfigDir } from '../helpers/cli.js';
import { Terminal } from '../helpers/terminal.js';

const config = tempConfigDir();
const RED = /\x1b\[(?:[0-9;]*;)?31m/;
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

/** `svc keys list` with no key anywhere: an error message, drawn by the renderer, with no server needed. */
const noKey = (env: Record<string, string>) => svc(['keys', 'list'], { SVC_CONFIG_DIR: config.dir, ...env });

describe('FORCE_COLOR, as chalk reads it', () => {
  it('colours the messages even when piped', async () => {
    const plain = await noKey({});
    expect(plain.exitCode).toBe(3);
    expect(plain.stderr).not.toMatch(/\x1b/);
    for (const level of ['1', '2', '3', '']) {
      const forced = await noKey({ FORCE_COLOR: level });
      expect(forced.exitCode).toBe(3);
      expect(forced.stderr).toMatch(/^\x1b\[31merror:\x1b\[39m /);
    }
  });

  it('gives way to NO_COLOR', async () => {
    const result = await noKey({ FORCE_COLOR: '3', NO_COLOR: '1' });
    expect(result.stderr).toMatch(/^error: /);
    expect(result.stderr).not.toMatch(/\x1b/);
  });

  it('=0 turns colour off on a terminal', async () => {
    const env = { SVC_CONFIG_DIR: config.dir };
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'list'], env);
    expect(await term.exitCode()).toBe(3);
    expect(await term.screenWithColour()).toMatch(RED);
    await term.close();
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'list'], { ...env, FORCE_COLOR: '0' });
    expect(await term.exitCode()).toBe(3);
    const screen = await term.screenWithColour();
    expect(screen).toContain('error: ');
    expect(screen).not.toMatch(RED);
  });
});
