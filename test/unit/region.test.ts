// tier: in-process
/**
 * The renderer's region: what is drawn through it is followed, and clearing
 * takes back exactly the rows it took, at the terminal's width when cleared.
 * What a real terminal makes of it is in test/e2e/interactive.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Region } from '../../src/cli/terminal/region.js';
import { Renderer } from '../../src/cli/terminal/renderer.js';
import { memoryIO, terminalLibraries } from '../helpers/memory-io.js';

function terminal(columns = 20, rows = 10, tty = true) {
  const size = { columns, rows };
  const resized = new Set<() => void>();
  const onResize = (listener: () => void) => {
    resized.add(listener);
    return () => resized.delete(listener);
  };
  const mem = memoryIO({ stdinIsTTY: tty, stdoutIsTTY: tty, stderrIsTTY: tty, onResize });
  Object.defineProperties(mem.io, {
    columns: { get: () => size.columns },
    rows: { get: () => size.rows },
  });
  const region = new Region(mem.io);
  const render = new Renderer(region.io, { quiet: false }, terminalLibraries);
  /** What the last clear wrote: everything after the last write before it. */
  const cleared = (before: number) => mem.stderr().slice(before);
  /** The terminal made this size, told as a SIGWINCH would tell it. */
  const resize = (to: { columns: number; rows: number }) => {
    Object.assign(size, to);
    for (const listener of [...resized]) listener();
  };
  return { mem, region, render, size, cleared, resize };
}

describe('a region', () => {
  it('clears the rows its lines took, and writes again only what the renderer said in it', () => {
    const { mem, region, render, cleared } = terminal();
    region.start(true);
    render.info('one');
    render.lines(['data']);
    // A question as inquirer draws and then clears it: up, erase, back.
    region.io.stderr.write('? question\n  answer\x1b[1A\x1b[10G');
    region.io.stderr.write('\x1b[1B\x1b[2K\x1b[1A\x1b[2K\x1b[G');
    const before = mem.stderr().length;
    region.clear();
    // Three rows above the cursor (one, data, the question's row is where it stands), four rows in all.
    expect(cleared(before)).toBe('\r\x1b[2A\x1b[2K\x1b[1B\x1b[2K\x1b[1B\x1b[2K\x1b[1B\x1b[2K\x1b[3Aone\ndata\n');
  });

  it('counts a line wider than the terminal as the rows it wraps to, and again after a resize', () => {
    const { mem, region, render, size, cleared } = terminal(20);
    region.start(false);
    render.lines(['x'.repeat(45)]);
    let before = mem.stderr().length;
    region.clear();
    expect(cleared(before)).toMatch(/^\r\x1b\[3A/);

    region.start(false);
    render.lines(['x'.repeat(45)]);
    // The terminal rewraps the line at its new width: two rows, not three.
    size.columns = 30;
    before = mem.stderr().length;
    region.clear();
    expect(cleared(before)).toMatch(/^\r\x1b\[2A/);
  });

  it('leaves a region taller than the terminal whole, and does not say its messages twice', () => {
    const { mem, region, render } = terminal(20, 5);
    region.start(true);
    for (let i = 0; i < 6; i++) render.info(`line ${i}`);
    const before = mem.stderr();
    region.clear();
    expect(mem.stderr()).toBe(before);
  });

  it('drops the data it held when asked (a secret acknowledged), keeping the messages', () => {
    const { mem, region, render, cleared } = terminal(80, 24);
    region.start(true);
    render.success('Created the key.');
    render.lines(['', '  sk_secret', '']);
    render.warn('Store it now.');
    const before = mem.stderr().length;
    region.clear({ dropData: true });
    expect(cleared(before)).not.toContain('sk_secret');
    expect(cleared(before)).toMatch(/✓ Created the key\.\n! Store it now\.\n$/);
  });

  it('clears the screen and the scrollback whole to drop data that may have reached the scrollback (a region taller than the terminal, or one the terminal was resized under), then writes again what was said', () => {
    const ways = {
      taller: (t: ReturnType<typeof terminal>) => {
        for (let i = 0; i < 30; i++) t.render.info(`line ${i}`);
      },
      resized: (t: ReturnType<typeof terminal>) => t.resize({ columns: 40, rows: 24 }),
    };
    for (const [way, push] of Object.entries(ways)) {
      const t = terminal(80, 24);
      // An earlier action's message, left above the screen: written again after the scrollback is cleared.
      t.region.start(true);
      t.render.info('Revoked the old key.');
      t.region.clear();
      t.region.start(true);
      t.render.success('Created the key.');
      t.render.lines(['', '  sk_secret', '']);
      push(t);
      const before = t.mem.stderr().length;
      t.region.clear({ dropData: true });
      const written = t.cleared(before);
      expect(written, way).toMatch(/^\x1b\[H\x1b\[2J\x1b\[3JRevoked the old key\.\n✓ Created the key\.\n/);
      expect(written, way).not.toContain('sk_secret');
    }
  });

  it('erases a region resized under it that holds no data as before: rows, not the scrollback', () => {
    const t = terminal(80, 24);
    t.region.start(true);
    t.render.info('said');
    t.resize({ columns: 40, rows: 24 });
    const before = t.mem.stderr().length;
    t.region.clear({ dropData: true });
    expect(t.cleared(before)).toBe('\r\x1b[1A\x1b[2K\x1b[1B\x1b[2K\x1b[1Asaid\n');
  });

  it('keeps nothing of a screen, and leaves what is on it with leave()', () => {
    const { mem, region, render, cleared } = terminal(80, 24);
    region.start(false);
    render.info('header');
    let before = mem.stderr().length;
    region.clear();
    expect(cleared(before)).not.toContain('header');

    region.start(true);
    render.lines(['sk_secret']);
    before = mem.stderr().length;
    region.leave();
    render.info('next');
    expect(cleared(before)).toBe('next\n');
  });

  it('writes no escape where the terminal is not one', () => {
    const { mem, region, render } = terminal(80, 24, false);
    region.start(true);
    render.info('said');
    region.clear();
    expect(mem.stderr()).toBe('said\n');
  });
});
