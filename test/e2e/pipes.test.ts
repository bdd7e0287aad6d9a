// tier: process
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { StateFile } from '../../src/server/persistence.js';
import { Store } from '../../src/server/store.js';
import { cleanEnv, startLocalServer, SVC_BIN, tempConfigDir, type LocalServer } from '../helpers/cli.js';

// docs/contract.md §C3: stdout reaches a slow reader whole, however large; a reader
// that leaves ends svc quietly. Real OS pipes, through a real shell.

const KEYS = 2_000;
const dir = mkdtempSync(join(tmpdir(), 'svc-pipes-'));
const config = tempConfigDir();
let server: LocalServer;
let env: Record<string, string>;

// The keys are made in this process and saved as svc serve's data file: made over HTTP, 2,000 of them
// took longer than the rest of the file and, on a loaded machine, ran the test out of time.
beforeAll(async () => {
  const store = new Store(new Clock());
  const { user } = store.createUser('Local user', 'pro');
  const { secret } = store.createKey(user, 'bootstrap', null);
  for (let i = 1; i < KEYS; i++) store.createKey(user, `pipe ${i}`, null);
  const file = join(dir, 'state.json');
  await StateFile.create(file, store);
  server = await startLocalServer(['--data', file]);
  env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url, SVC_API_KEY: secret };
});
afterAll(async () => {
  await server?.stop();
  config.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** svc on the left of a shell pipe whose reader waits before reading; svc's own exit status comes back. */
function piped(args: string[], reader: string) {
  const command = `node '${SVC_BIN}' ${args.join(' ')} | ${reader}; exit \${PIPESTATUS[0]}`;
  return execa('bash', ['-c', command], { env: cleanEnv(env), extendEnv: false, reject: false, stdin: 'ignore' });
}

describe('output into a pipe', () => {
  it(`a slow reader gets the whole --json list of ${KEYS} keys, every time`, async () => {
    for (let round = 0; round < 4; round++) {
      const result = await piped(['keys', 'list', '--json'], '(sleep 0.3; cat)');
      expect(result.exitCode).toBe(0);
      expect(result.stdout.length).toBeGreaterThan(256 * 1024);
      expect(JSON.parse(result.stdout).keys).toHaveLength(KEYS);
    }
  });

  it('a slow reader gets every TSV row, every time', async () => {
    for (let round = 0; round < 4; round++) {
      const result = await piped(['keys', 'list'], '(sleep 0.3; cat)');
      expect(result.exitCode).toBe(0);
      const lines = result.stdout.split('\n');
      expect(lines).toHaveLength(KEYS + 1);
      expect(lines.every((line) => line.split('\t').length === 8)).toBe(true);
    }
  });

  it('a reader that leaves early ends svc quietly, as SIGPIPE would (141)', async () => {
    const result = await piped(['keys', 'list', '--json'], 'head -c 100');
    expect(result.stdout).toHaveLength(100);
    expect(result.exitCode).toBe(141);
    expect(result.stderr).toBe('');
  });

  it('svc --version, answered by bin/ with one write, ends quietly too when its reader is gone', async () => {
    // `exec 1>&-` would give a closed descriptor, not a pipe; `true` exits without reading.
    const command = `sleep 0.2 | (sleep 0.1; node '${SVC_BIN}' --version) | true; exit \${PIPESTATUS[1]}`;
    const result = await execa('bash', ['-c', command], { env: cleanEnv(env), extendEnv: false, reject: false, stdin: 'ignore' });
    expect(result.exitCode).toBe(141);
    expect(result.stderr).toBe('');
  });

  it('svc --version reaches a reader whole, in the same text as the package version', async () => {
    const { version } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    const result = await piped(['--version'], '(sleep 0.2; cat)');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(version);
  });
});
