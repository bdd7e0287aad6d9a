// tier: process
/**
 * Save failures made real (docs/contract.md §B): the data directory is a tiny tmpfs
 * that fills up, or a mount made read-only. Whatever was answered 2xx is on
 * disk and survives a restart; whatever was answered 503 is not visible,
 * before the restart or after it. Mounting needs root: without it these
 * tests are skipped, and their names say so.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerStartError, startServer } from '../../src/server/listen.js';
import { startServe, type ServeProcess } from '../abuse/helpers.js';
import { canMount, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';
import { startTestServer, type Answer, type TestServer } from './helpers.js';
import { savedBytes, savedState } from '../helpers/saved-state.js';

const mounts: Tmpfs[] = [];
const servers: (TestServer | ServeProcess)[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await ('close' in server ? server.close() : server.stop());
  for (const mount of mounts.splice(0)) mount.unmount();
});

function tmpfs(size: string): Tmpfs {
  const mount = mountTmpfs(size);
  mounts.push(mount);
  return mount;
}

async function serve(dataFile: string, warnings: string[] = []): Promise<TestServer> {
  const t = await startTestServer({ plan: 'pro', dataFile, logWarning: (message) => warnings.push(message) });
  servers.push(t);
  return t;
}

/** The server, stopped and started again on the same file: only what is on disk survives. */
async function restart(t: TestServer, dataFile: string): Promise<TestServer> {
  servers.splice(servers.indexOf(t), 1);
  await t.close();
  return serve(dataFile);
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status, answer.text).toBe(503);
  expect(answer.json).toEqual({ error: expect.stringContaining('not made'), code: 'UNAVAILABLE' });
  expect(answer.text).not.toMatch(/sk_[A-Za-z0-9]{64}/);
}

type State = 'enabled' | 'disabled' | 'revoked';
interface Tracked {
  id: string;
  name: string;
  secret: string;
  /** The state its last 2xx answer left it in; a 503 must have changed nothing. */
  state: State;
}

/** The server agrees with `keys` and `refused` through the API (list and authentication), and so does the file. */
async function expectExactly(t: TestServer, bootstrapKey: string, dataFile: string, keys: Tracked[], refused: string[]): Promise<void> {
  await t.startOfNextWindow();
  const list = await t.api('GET', '/user/api-keys', { key: bootstrapKey });
  expect(list.status).toBe(200);
  const listed = new Map<string, { name: string; status: string }>(list.json.keys.map((k: { id: string }) => [k.id, k]));
  const names = new Set([...listed.values()].map((k) => k.name));
  for (const name of refused) expect(names.has(name), `${name} was answered 503 but is listed`).toBe(false);
  for (const key of keys) {
    expect(listed.get(key.id)?.status ?? 'revoked', `${key.name} is listed as`).toBe(key.state);
    const use = await t.api('GET', '/workspace', { key: key.secret });
    expect(use.status, `${key.name} (${key.state}) authenticating`).toBe(key.state === 'enabled' ? 200 : 401);
  }
  const saved = await savedState(dataFile);
  const onDisk = new Map<string, { enabled: boolean }>(saved.keys.map((k: { id: string }) => [k.id, k]));
  expect([...onDisk.keys()].sort()).toEqual([...listed.keys()].sort());
  for (const [id, record] of listed) expect(onDisk.get(id)!.enabled).toBe(record.status === 'enabled');
}

const needsRoot = '(needs root to mount a tmpfs; skipped when not root)';

describe.skipIf(!canMount)(`save failures on a real file system ${needsRoot}`, () => {
  it('a disk that fills up under a storm of creates, disables and revokes: 2xx is on disk, 503 is nowhere, reads go on', async () => {
    const mount = tmpfs('40k');
    const file = join(mount.dir, 'state.json');
    const warnings: string[] = [];
    let t = await serve(file, warnings);
    const bootstrapKey = t.apiKey;
    const keys: Tracked[] = [];
    const refused: string[] = [];
    const counts = { ok: 0, unavailable: 0, reads: 0 };
    let storming = true;

    const change = async (key: Tracked, to: State) => {
      const answer =
        to === 'revoked'
          ? await t.api('DELETE', `/user/api-keys/${key.id}`)
          : await t.api('PATCH', `/user/api-keys/${key.id}`, { body: { enabled: to === 'enabled' } });
      if (answer.status === 503) {
        expectUnavailable(answer);
        counts.unavailable++;
        return;
      }
      expect(answer.status, answer.text).toBe(200);
      key.state = to;
      counts.ok++;
    };
    // Each worker changes only its own keys, so it knows what each 2xx left behind.
    const worker = async (w: number) => {
      const mine: Tracked[] = [];
      let refusals = 0;
      for (let i = 0; i < 60 && refusals < 4; i++) {
        const live = mine.filter((k) => k.state !== 'revoked');
        if (i % 4 === 2 && live.length > 0) await change(live[0]!, 'revoked');
        else if (i % 4 === 3 && live.length > 0) await change(live.at(-1)!, live.at(-1)!.state === 'enabled' ? 'disabled' : 'enabled');
        else {
          const name = `storm-${w}-${i}-${'n'.repeat(85)}`;
          const answer = await t.api('POST', '/user/api-keys', { body: { name } });
          if (answer.status === 503) {
            expectUnavailable(answer);
            refused.push(name);
            refusals++;
            counts.unavailable++;
            continue;
          }
          expect(answer.status, answer.text).toBe(201);
          const key = { id: answer.json.id, name, secret: answer.json.secret, state: 'enabled' as State };
          mine.push(key);
          keys.push(key);
          counts.ok++;
        }
      }
    };
    const reader = async () => {
      while (storming) {
        // Only refusals known before asking: a create still in flight is visible until its save fails.
        const known = [...refused];
        const answer = await t.api('GET', '/user/api-keys');
        expect(answer.status).toBe(200);
        for (const name of known) expect(answer.json.keys.some((k: { name: string }) => k.name === name)).toBe(false);
        counts.reads++;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    await t.startOfNextWindow();
    const reading = reader();
    await Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
    storming = false;
    await reading;

    // The test proves something only if the disk did fill up half-way through.
    expect(counts.ok).toBeGreaterThan(20);
    expect(counts.unavailable).toBeGreaterThan(10);
    expect(counts.reads).toBeGreaterThan(5);
    expect(warnings.some((w) => w.includes('no space left on the device'))).toBe(true);

    await expectExactly(t, bootstrapKey, file, keys, refused);
    t = await restart(t, file);
    await expectExactly(t, bootstrapKey, file, keys, refused);
  });

  it('a full disk refuses every kind of change with 503 and changes nothing; freed, it saves again, and a restart agrees', async () => {
    const mount = tmpfs('256k');
    const file = join(mount.dir, 'state.json');
    let t = await serve(file);
    const bootstrapKey = t.apiKey;
    const create = async (name: string): Promise<Tracked> => {
      const answer = await t.api('POST', '/user/api-keys', { body: { name } });
      expect(answer.status, answer.text).toBe(201);
      return { id: answer.json.id, name, secret: answer.json.secret, state: 'enabled' };
    };
    const revokeMe = await create('revoke-me');
    const disableMe = await create('disable-me');
    const workspace = await t.admin('POST', '/workspaces', { userId: t.server.ready.userId, name: 'Second', plan: 'starter' });
    expect(workspace.status).toBe(201);
    // A journal file keeps the rest of its last block: a record that fits there is saved on a full disk too.
    // Restarted, the server has folded its journal into the snapshot, and its next record needs new space.
    t = await restart(t, file);
    // Loaded from its file, the server shows no key of its own: its requests go on with the bootstrap key.
    const api = t.api;
    t.api = (method, path, options = {}) => api(method, path, { key: bootstrapKey, ...options });
    const before = savedBytes(file);

    mount.fill();
    const answers = await Promise.all([
      t.api('POST', '/user/api-keys', { body: { name: 'refused-1' } }),
      t.api('POST', '/user/api-keys', { body: { name: 'refused-2' } }),
      t.api('DELETE', `/user/api-keys/${revokeMe.id}`),
      t.api('PATCH', `/user/api-keys/${disableMe.id}`, { body: { enabled: false } }),
      t.admin('POST', '/users', { name: 'refused user' }),
      t.admin('PATCH', `/workspaces/${t.server.ready.workspaceId}`, { plan: 'free' }),
      t.admin('PUT', `/users/${t.server.ready.userId}/active-workspace`, { workspaceId: workspace.json.id }),
      t.api('POST', '/user/api-keys', { body: { name: 'refused-3' } }),
    ]);
    answers.forEach(expectUnavailable);
    // A revoke and a disable answered 503 did not happen: the keys work, as before.
    await expectExactly(t, bootstrapKey, file, [revokeMe, disableMe], ['refused-1', 'refused-2', 'refused-3']);
    expect((await t.api('GET', '/workspace')).json.plan).toBe('pro');
    expect(savedBytes(file)).toBe(before);
    // The active workspace did not switch: a key made now is anchored where it was.
    mount.free();
    const after = await create('after-free');
    const list = await t.api('GET', '/user/api-keys');
    expect(list.json.keys.find((k: { id: string }) => k.id === after.id).workspaceId).toBe(t.server.ready.workspaceId);
    expect((await t.api('DELETE', `/user/api-keys/${revokeMe.id}`)).status).toBe(200);
    revokeMe.state = 'revoked';
    expect((await savedState(file)).users).toHaveLength(1);

    t = await restart(t, file);
    await expectExactly(t, bootstrapKey, file, [revokeMe, disableMe, after], ['refused-1', 'refused-2', 'refused-3']);
  });

  it('a directory remounted read-only: 503 and nothing changed, reads go on; writable again, it saves; start-up refuses it', async () => {
    const mount = tmpfs('256k');
    const file = join(mount.dir, 'state.json');
    const warnings: string[] = [];
    let t = await serve(file, warnings);
    const bootstrapKey = t.apiKey;
    const answer = await t.api('POST', '/user/api-keys', { body: { name: 'before' } });
    const before: Tracked = { id: answer.json.id, name: 'before', secret: answer.json.secret, state: 'enabled' };

    mount.readOnly();
    expectUnavailable(await t.api('POST', '/user/api-keys', { body: { name: 'refused' } }));
    expectUnavailable(await t.api('DELETE', `/user/api-keys/${before.id}`));
    expect(warnings.some((w) => w.includes('the file system is read-only'))).toBe(true);
    await expectExactly(t, bootstrapKey, file, [before], ['refused']);

    mount.readWrite();
    expect((await t.api('PATCH', `/user/api-keys/${before.id}`, { body: { enabled: false } })).status).toBe(200);
    before.state = 'disabled';
    t = await restart(t, file);
    await expectExactly(t, bootstrapKey, file, [before], ['refused']);

    servers.splice(servers.indexOf(t), 1);
    await t.close();
    mount.readOnly();
    const start = startServer({ host: '127.0.0.1', port: 0, dataFile: file });
    await expect(start).rejects.toBeInstanceOf(ServerStartError);
    await expect(start).rejects.toThrow(`cannot save ${file} (the file system is read-only)`);
  });

  it('svc serve on a disk that fills up: 503 with a one-line warning on stderr, and a clean exit 0 on SIGTERM', async () => {
    const mount = tmpfs('256k');
    const file = join(mount.dir, 'state.json');
    const server = await startServe(['--data', file]);
    servers.push(server);
    const create = (name: string) =>
      fetch(`${server.url}/api/service/user/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
    // Filled before the first change: a journal file would keep the rest of its last block, where a record fits.
    mount.fill();
    const refused = await create('refused');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'UNAVAILABLE' });
    // stderr is a pipe: the line may arrive after the answer.
    await expect
      .poll(() => server.stderr())
      .toMatch(/^svc serve: cannot write .*state\.json: no space left on the device; the changes since the last save were undone\n$/);
    mount.free();
    expect((await create('fits')).status).toBe(201);
    // Stopped on a full disk: the last compaction fails, and is only told.
    mount.fill();
    const exited = new Promise<number | null>((done) => server.child.once('exit', (code) => done(code)));
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(server.stderr()).not.toMatch(/\n\s+at /);
  });
});
