// tier: in-process
/**
 * The interactive manager's screen laid out for the terminal it is on: the
 * screen and the menu below it fit the terminal's rows, counted as the
 * renderer wraps each line at its width, whatever the size and however many
 * keys. What the terminal itself does with it (the scrollback, a resize) is
 * in test/e2e/interactive.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../../src/cli/text/width.js';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';
import { shownText } from '../../helpers/shown-text.js';

const SIZES = [
  { columns: 40, rows: 10 },
  { columns: 60, rows: 15 },
  { columns: 70, rows: 15 },
  { columns: 100, rows: 30 },
];

/** Keys made after the key in use, which is then the oldest: the one a screen showing the newest would leave out. */
async function serverWith(keys: number): Promise<LocalServer> {
  const server = await startLocalServer({ plan: 'pro' });
  for (let i = 1; i <= keys; i++) await call(server.url, 'POST', '/api/service/user/api-keys', server.apiKey!, { name: `bulk-${i}` });
  return server;
}

/** The first screen at `size`, as the terminal shows it, and how its menu was to be drawn. */
async function firstScreen(server: LocalServer, size: { columns: number; rows: number }, configDir: string) {
  const prompter = scriptedPrompter([{ menu: null }]);
  const result = await svc([], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: configDir }, { tty: true, ...size, deps: { prompter } });
  expect(result.exitCode, result.stderr).toBe(0);
  const screen = shownText(result.stderr);
  const menu = prompter.menus[0]!;
  // The menu: its question, its rows of choices, and the blank row and line of keys when shown.
  const menuRows = 1 + menu.pageSize! + (menu.help ? 2 : 0);
  const screenRows = screen.split('\n').reduce((rows, line) => rows + Math.max(1, Math.ceil(displayWidth(line) / size.columns)), 0);
  return { screen, screenRows, menuRows, menu };
}

describe.each([3, 300])('the manager with %i keys', (count) => {
  let server: LocalServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await serverWith(count - 1);
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

  it.each(SIZES)('fits $columns x $rows with the menu, and shows the key in use', async (size) => {
    const { screen, screenRows, menuRows, menu } = await firstScreen(server, size, config.dir);
    expect(screenRows + menuRows, screen).toBeLessThanOrEqual(size.rows);
    expect(menu.pageSize).toBeGreaterThanOrEqual(3);
    // Never every key when they do not fit; the key in use (the oldest here) among those shown.
    const rows = screen.split('\n').filter((line) => /^\*? *key_\w+/.test(line));
    expect(rows.filter((line) => line.startsWith('*')), screen).toHaveLength(1);
    const more = /… and (\d+) more/.exec(screen);
    expect(rows.length + Number(more?.[1] ?? 0), screen).toBe(count);
    if (count === 300) expect(more, screen).not.toBeNull();
    // A roomy terminal shows a few keys whole.
    if (count === 3 && size.rows >= 15) expect(more, screen).toBeNull();
  });
});
