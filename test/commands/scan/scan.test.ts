// tier: in-process
import { readFileSync, symlinkSync, truncateSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, useTrees } from '../../helpers/scan-fixtures.js';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';
import { sarifProblems } from '../../helpers/sarif.js';
import { keyHint } from '../../../src/contract/key-format.js';
import { fingerprint } from '../../../src/cli/domain/find-keys.js';

// docs/contract.md §C11 (`svc scan`) against the reference server: every state a found key can be in,
// each in a tree, a repository's history, the index and a CI log; what --revoke ends, and nothing else.

interface ScannedKey {
  fingerprint: string;
  hint: string;
  state: 'live' | 'not-live' | 'not-checked';
  why: string | null;
  verifiedBy: 'key' | 'hint' | null;
  key: { id: string | null; name: string | null; workspaceId: string | null } | null;
  revoked: 'this-run' | 'already-gone' | 'failed' | 'not-tried' | null;
  refusedAfterRevoke: boolean | null;
  places: { source: string; path?: string; line: number; column: number; commit?: string | null; escaped: boolean; context: string }[];
}
interface ScanDocument {
  keys: ScannedKey[];
  summary: { keys: number; places: number; live: number; notLive: number; notChecked: number; revoked: number; alreadyRevoked: number };
  ignored: { byFile: number; byMarker: number };
  scanned: { read: number; skipped: { tooLarge: number; special: number; links: number; unreadable: number; gitDirs: number } };
}

const HOUR = 3_600_000;
const matchesSchema = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../docs/scan.schema.json'), 'utf8')));
const fake = () => `sk_${'Fake'.repeat(16)}`;

describe('svc scan', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
  const scan = (args: string[], options: Parameters<typeof svc>[2] = {}, extra: Record<string, string> = {}) => svc(['scan', ...args], { ...env(), ...extra }, options);
  /** The document, held to docs/scan.schema.json every time a test reads one. */
  const json = (out: string) => {
    const doc: unknown = JSON.parse(out);
    expect(matchesSchema(doc), JSON.stringify(matchesSchema.errors)).toBe(true);
    return doc as ScanDocument;
  };
  const byHint = (doc: ScanDocument) => Object.fromEntries(doc.keys.map((k) => [k.hint, k]));
  const keys: Record<string, { id: string; secret: string }> = {};
  const create = async (name: string, keyEnv: Record<string, string> = env(), ...args: string[]) => {
    keys[name] = await createKey(keyEnv, name, ...args);
  };
  const tree = useTrees();
  const refused = async (secret: string) => (await call(server.url, 'GET', '/api/service/user/api-keys', secret)).status === 401;

  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
    await create('live');
    await create('off');
    expect((await svc(['keys', 'disable', keys.off!.id], env())).exitCode).toBe(0);
    await create('expiring', env(), '--expires-in', '1h');
    await create('gone');
    expect((await svc(['keys', 'revoke', keys.gone!.id, '--yes'], env())).exitCode).toBe(0);
    // The same user's second workspace, and another user altogether.
    const { userId } = server;
    const second = await call(server.url, 'POST', '/_local/workspaces', server.adminToken, { userId, plan: 'starter', name: 'second' });
    expect(second.status, second.text).toBe(201);
    await call(server.url, 'PUT', `/_local/users/${userId}/active-workspace`, server.adminToken, { workspaceId: second.json.id });
    await create('elsewhere');
    await call(server.url, 'PUT', `/_local/users/${userId}/active-workspace`, server.adminToken, { workspaceId: server.workspaceId });
    const other = await call(server.url, 'POST', '/_local/users', server.adminToken, { name: 'someone else', plan: 'free' });
    expect(other.status, other.text).toBe(201);
    keys.stranger = { id: other.json.apiKey.id, secret: other.json.apiKey.secret };
    await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: (2 * HOUR) / 1000 });
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

  it('tells each key found in a tree by its state, and whose it is, without printing a secret', async () => {
    const dir = tree({
      '.env': `LIVE=${keys.live!.secret}\nOFF=${keys.off!.secret}\n`,
      'config/app.json': `{"expiring": "${keys.expiring!.secret}", "gone": "${keys.gone!.secret}"}\n`,
      'deploy/values.yaml': `elsewhere: ${keys.elsewhere!.secret}\nstranger: ${keys.stranger!.secret}\nfake: ${fake()}\n`,
    });
    const result = await scan([dir, '--json']);
    expect(result.exitCode, result.stderr).toBe(1);
    const found = byHint(json(result.stdout));
    const state = (name: string) => {
      const k = found[keyHint(keys[name]!.secret)]!;
      return [k.state, k.why, k.key?.id ?? null];
    };
    expect(state('live')).toEqual(['live', null, keys.live!.id]);
    expect(state('off')).toEqual(['not-live', 'disabled', keys.off!.id]);
    expect(state('expiring')).toEqual(['not-live', 'expired', keys.expiring!.id]);
    expect(state('gone')).toEqual(['not-live', 'refused', null]);
    expect(state('elsewhere')).toEqual(['live', null, keys.elsewhere!.id]);
    expect(state('stranger')).toEqual(['live', null, keys.stranger!.id]);
    expect(found[keyHint(fake())]!.state).toBe('not-live');
    expect(found[keyHint(keys.live!.secret)]!.places).toEqual([expect.objectContaining({ source: 'file', path: join(dir, '.env'), line: 1, column: 6 })]);
    for (const secret of Object.values(keys).map((k) => k.secret)) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
  });

  it('a key in a file name is shown by its hint, in the table, the JSON, SARIF and the ignore file alike', async () => {
    const dir = tree({ [`${keys.gone!.secret}.d/${keys.live!.secret}`]: `x=${fake()}\n` });
    const outputs = [await scan([dir]), await scan([dir, '--json']), await scan([dir, '--format', 'sarif']), await scan([dir, '--baseline'])];
    const written = readFileSync(join(dir, '.svcscanignore'), 'utf8');
    for (const secret of [keys.gone!.secret, keys.live!.secret]) {
      for (const { stdout, stderr } of outputs) expect(stdout + stderr).not.toContain(secret);
      expect(written).not.toContain(secret);
    }
    expect(outputs[0]!.stdout).toContain(`${keyHint(keys.gone!.secret)}.d/${keyHint(keys.live!.secret)}:1`);
    // The baseline is read back whole: none of its lines holds a key.
    const again = await scan([dir, '--json']);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain('holds a key itself');
  });

  it('on a terminal draws the table of places, hints and states', async () => {
    const dir = tree({ 'a.txt': `token ${keys.live!.secret}\n`, 'b.txt': `x ${keys.gone!.secret}\n` });
    const result = await scan([dir], { tty: true, columns: 120 });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/WHERE +KEY +STATE +WHOSE/);
    expect(result.stdout).toContain(`${keyHint(keys.live!.secret)}  live`);
    expect(result.stdout).not.toContain(keys.live!.secret);
    expect(result.stderr).toContain('Found 2 keys in 2 places: 1 live, 1 not live.');
    expect(result.stderr).toContain('svc keys rotate');
  });

  it('finds keys JSON-escaped and percent-encoded, never one split across lines, and skips a marked line', async () => {
    const secret = keys.live!.secret;
    const dir = tree({
      'escaped.json': `{"k": "sk\\u005f${secret.slice(3)}"}\n`,
      'url.log': `GET /x?key=sk%5F${secret.slice(3, 10)}%41${secret.slice(11)}&y=1\n`.replace('%41', `%${secret.charCodeAt(10).toString(16)}`),
      'split.txt': `${secret.slice(0, 30)}\n${secret.slice(30)}\n`,
      'fixture.ts': `const k = '${secret}'; // svc-scan: ignore\n`,
    });
    const doc = json((await scan([dir, '--json', '--no-verify'])).stdout);
    const places = doc.keys.flatMap((k) => k.places.map((p) => [p.path!.slice(dir.length + 1), p.escaped]));
    expect(places.sort()).toEqual([
      ['escaped.json', true],
      ['url.log', true],
    ]);
    expect(doc.keys).toHaveLength(1);
    expect(doc.ignored.byMarker).toBe(1);
  });

  it('leaves links and files over the size limit, counting each, and shows hostile names escaped', async () => {
    const dir = tree({ 'ok.txt': `${keys.live!.secret}\n` });
    symlinkSync('loop', join(dir, 'loop'));
    symlinkSync('/', join(dir, 'root'));
    const sparse = join(dir, 'sparse.img');
    writeFileSync(sparse, '');
    truncateSync(sparse, 2 * 1024 ** 3);
    const hostile = 'evil\n\x1b[31mred\u202e.txt';
    writeFileSync(join(dir, hostile), `k=${keys.gone!.secret}\n`);
    const result = await scan([dir, '--json']);
    const doc = json(result.stdout);
    expect(doc.scanned.skipped).toMatchObject({ tooLarge: 1, links: 2 });
    expect(doc.keys.flatMap((k) => k.places.map((p) => p.path)).sort()).toEqual([join(dir, hostile), join(dir, 'ok.txt')].sort());
    const shown = await scan([dir], { tty: true, columns: 200 });
    expect(shown.stdout).toContain('evil\\n\\x1b[31mred\\u202e.txt');
    expect(shown.stdout).not.toContain('\x1b[31m');
    expect(shown.stderr).toContain('1 over --max-file-size');
  });

  it('reads a file larger than it holds in memory in pieces, and finds a key at its end', async () => {
    const dir = tree({});
    const big = join(dir, 'big.log');
    const fd = openSync(big, 'w');
    writeSync(fd, Buffer.alloc(20 * 1024 * 1024, 'x\n'));
    writeSync(fd, `\nlate ${keys.live!.secret}\n`);
    closeSync(fd);
    const doc = json((await scan([dir, '--json', '--no-verify'])).stdout);
    expect(doc.keys[0]!.places[0]).toMatchObject({ line: 10 * 1024 * 1024 + 2, column: 6 });
  });

  it('--revoke --yes revokes exactly the live keys it can name, by the profile where it can, and sees each refused', async () => {
    await create('leaked-1');
    await create('leaked-2');
    const other = await call(server.url, 'POST', '/_local/users', server.adminToken, { name: 'third', plan: 'free' });
    const theirs = other.json.apiKey.secret as string;
    const dir = tree({
      'a.env': `A=${keys['leaked-1']!.secret}\nB=${keys['leaked-2']!.secret}\nC=${theirs}\nD=${keys.off!.secret}\nE=${fake()}\n`,
    });
    const result = await scan([dir, '--revoke', '--yes', '--json']);
    expect(result.exitCode, result.stderr).toBe(7);
    const found = byHint(json(result.stdout));
    for (const secret of [keys['leaked-1']!.secret, keys['leaked-2']!.secret, theirs]) {
      expect(found[keyHint(secret)]).toMatchObject({ revoked: 'this-run', refusedAfterRevoke: true });
      expect(await refused(secret)).toBe(true);
    }
    expect(found[keyHint(keys.off!.secret)]!.revoked).toBeNull();
    // The disabled key was left as it was: enabling it again works.
    expect((await svc(['keys', 'enable', keys.off!.id], env())).exitCode).toBe(0);
    expect((await svc(['keys', 'disable', keys.off!.id], env())).exitCode).toBe(0);
    expect(await refused(server.apiKey!)).toBe(false);
  });

  it('two --revoke runs at once: each key is revoked by one, and the other says it found it already revoked, or not live', async () => {
    for (const name of ['both-1', 'both-2', 'both-3']) await create(name);
    const dir = tree({ 'a.env': ['both-1', 'both-2', 'both-3'].map((n) => `${n}=${keys[n]!.secret}`).join('\n') });
    const [a, b] = await Promise.all([scan([dir, '--revoke', '--yes', '--json']), scan([dir, '--revoke', '--yes', '--json'])]);
    for (const run of [a, b]) expect(run.exitCode, run.stderr).toBe(7);
    for (const name of ['both-1', 'both-2', 'both-3']) {
      const told = [a, b].map((run) => byHint(json(run.stdout))[keyHint(keys[name]!.secret)]!);
      expect(told.filter((k) => k.revoked === 'this-run')).toHaveLength(1);
      // The other run either tried too and found it gone, or checked it after it was revoked.
      expect(told.filter((k) => k.revoked === 'already-gone' || (k.revoked === null && k.state === 'not-live'))).toHaveLength(1);
      expect(await refused(keys[name]!.secret)).toBe(true);
    }
    expect(json(a.stdout).summary.revoked + json(b.stdout).summary.revoked).toBe(3);
    for (const run of [a, b]) expect(run.stderr).not.toMatch(/places: \./);
  });

  it('--revoke off a terminal says why a revoke failed, and the key stays live in the report', async () => {
    await create('stays');
    const dir = tree({ 'a.env': `K=${keys.stays!.secret}\n` });
    await call(server.url, 'POST', '/_local/faults', server.adminToken, { rules: [{ method: 'DELETE', path: '/user/api-keys/*', status: 500, times: 0 }] });
    try {
      const result = await scan([dir, '--revoke', '--yes', '--json']);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`${keyHint(keys.stays!.secret)} was not revoked: the revoke failed`);
      expect(byHint(json(result.stdout))[keyHint(keys.stays!.secret)]).toMatchObject({ state: 'live', revoked: 'failed', why: expect.stringContaining('the revoke failed') });
    } finally {
      await call(server.url, 'DELETE', '/_local/faults', server.adminToken);
    }
    expect(await refused(keys.stays!.secret)).toBe(false);
  });

  it('--revoke without a terminal and without --yes is refused before anything is read', async () => {
    const dir = tree({ 'a.txt': `${keys.live!.secret}\n` });
    const result = await scan([dir, '--revoke']);
    expect(result.exitCode).toBe(2);
    expect(await refused(keys.live!.secret)).toBe(false);
  });

  it('on a terminal asks before revoking, and a No revokes nothing', async () => {
    await create('asked');
    const dir = tree({ 'a.txt': `${keys.asked!.secret}\n` });
    const result = await svc(['scan', dir, '--revoke'], env(), { tty: true, columns: 120, deps: { prompter: (await import('../../helpers/prompter.js')).scriptedPrompter([{ confirm: false }]) } });
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain(`'asked' (${keys.asked!.id})`);
    expect(result.stderr).toContain("revoked with the profile's key");
    expect(result.stderr).toContain('Cancelled; nothing was revoked.');
    expect(await refused(keys.asked!.secret)).toBe(false);
  });

  it('--verify own tells keys by the hints in your lists without sending them; --no-verify checks nothing', async () => {
    const dir = tree({ 'a.txt': `${keys.live!.secret} ${keys.off!.secret} ${keys.stranger!.secret}\n` });
    const own = byHint(json((await scan([dir, '--json', '--verify', 'own'])).stdout));
    expect(own[keyHint(keys.live!.secret)]).toMatchObject({ state: 'live', verifiedBy: 'hint' });
    expect(own[keyHint(keys.off!.secret)]).toMatchObject({ state: 'not-live', why: 'disabled' });
    expect(own[keyHint(keys.stranger!.secret)]).toMatchObject({ state: 'not-checked' });
    const none = await scan([dir, '--json', '--no-verify']);
    expect(none.exitCode).toBe(8);
    expect(json(none.stdout).keys.every((k) => k.state === 'not-checked')).toBe(true);
  });

  it('exits 0 when no key is found and 7 when none found is live', async () => {
    expect((await scan([tree({ 'a.txt': 'nothing here\n' })])).exitCode).toBe(0);
    expect((await scan([tree({ 'a.txt': `${keys.gone!.secret}\n` })])).exitCode).toBe(7);
  });

  it('--baseline writes fingerprints, never keys, and later scans leave those keys out', async () => {
    const dir = tree({ 'fixtures/k.txt': `${keys.gone!.secret}\n${fake()}\n` });
    const written = await scan([dir, '--baseline']);
    expect(written.exitCode, written.stderr).toBe(0);
    const file = readFileSync(join(dir, '.svcscanignore'), 'utf8');
    expect(file).toContain(fingerprint(keys.gone!.secret));
    expect(file).not.toContain(keys.gone!.secret);
    expect(file).not.toContain(fake());
    const again = await scan([dir, '--json']);
    expect(again.exitCode).toBe(0);
    expect(json(again.stdout).ignored.byFile).toBe(2);
  });

  it('an ignore file line that holds a key is not read as a reason to ignore it', async () => {
    const dir = tree({ '.svcscanignore': `${keys.gone!.secret}\n`, 'a.txt': `${keys.gone!.secret}\n` });
    const result = await scan([dir, '--json']);
    expect(json(result.stdout).keys).toHaveLength(2 - 1);
    expect(result.stderr).toContain('holds a key itself');
  });

  it('an ignore file that is a link, a FIFO-like device or too large is refused, never read or written through', async () => {
    const dir = tree({ 'a.txt': `${keys.gone!.secret}\n`, 'elsewhere.txt': 'not an ignore file\n' });
    symlinkSync(join(dir, 'elsewhere.txt'), join(dir, '.svcscanignore'));
    const baseline = await scan([dir, '--baseline']);
    expect(baseline.exitCode).toBe(2);
    expect(baseline.stderr).toContain('is a symbolic link');
    expect(readFileSync(join(dir, 'elsewhere.txt'), 'utf8')).toBe('not an ignore file\n');
    const device = tree({ 'a.txt': `${keys.gone!.secret}\n` });
    symlinkSync('/dev/zero', join(device, '.svcscanignore'));
    expect((await scan([device])).exitCode).toBe(2);
    const big = tree({ 'a.txt': `${keys.gone!.secret}\n`, '.svcscanignore': `${'0'.repeat(64)}\n`.repeat(20_000) });
    const result = await scan([big]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('larger than an ignore file can be');
  });

  it('--baseline leaves out of the file a line of it that holds a key', async () => {
    const dir = tree({ '.svcscanignore': `# mine\nkey=${keys.live!.secret}\n`, 'fixture.txt': `${fake()}\n` });
    expect((await scan([dir, '--baseline'])).exitCode).toBe(0);
    const file = readFileSync(join(dir, '.svcscanignore'), 'utf8');
    expect(file).toContain('# mine');
    expect(file).toContain(fingerprint(fake()));
    expect(file).not.toContain(keys.live!.secret);
  });

  it('reads a CI log from standard input', async () => {
    const log = `##[group]Run deploy\n+ export TOKEN=${keys.live!.secret}\n##[endgroup]\n\x1b[32m${keys.gone!.secret}\x1b[0m\n{"msg":"a\\n${keys.off!.secret}"}\n`;
    const result = await scan(['-', '--json'], { input: log });
    const found = byHint(json(result.stdout));
    expect(found[keyHint(keys.live!.secret)]!.places).toEqual([expect.objectContaining({ source: 'stdin', line: 2, column: 16 })]);
    expect(found[keyHint(keys.live!.secret)]!.state).toBe('live');
    // After a colour escape and after a JSON \n, as a log writes them.
    expect(found[keyHint(keys.gone!.secret)]!.places).toEqual([expect.objectContaining({ line: 4, column: 6 })]);
    expect(found[keyHint(keys.off!.secret)]!.places).toEqual([expect.objectContaining({ line: 5, column: 12 })]);
  });

  it('--format sarif is a SARIF 2.1.0 log a validator accepts, one result per place', async () => {
    const dir = tree({ 'a b/c%d.txt': `${keys.live!.secret}\n${keys.gone!.secret}\n`, 'e.txt': `${keys.live!.secret}\n` });
    const result = await scan([dir, '--format', 'sarif'], { cwd: dir });
    const log = JSON.parse(result.stdout);
    expect(await sarifProblems(log)).toEqual([]);
    const results = log.runs[0].results;
    expect(results).toHaveLength(3);
    expect(results.map((r: { level: string }) => r.level).sort()).toEqual(['error', 'error', 'warning']);
    expect(JSON.stringify(log)).not.toContain(keys.live!.secret);
  });

  it('runs against the profile server only: an address in the scanned text is never contacted', async () => {
    const dir = tree({ 'a.env': `SVC_BASE_URL=http://127.0.0.1:9/\nKEY=${keys.live!.secret}\n` });
    const result = await scan([dir, '--json']);
    expect(byHint(json(result.stdout))[keyHint(keys.live!.secret)]!.state).toBe('live');
  });
});
