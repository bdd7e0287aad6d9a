// tier: process
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { call, cleanEnv, SVC_BIN, useLocalServer } from '../helpers/cli.js';

// docs/contract.md §C3: stdout reaches a slow reader whole, however large; a reader
// that leaves ends svc quietly. Real OS pipes, through a real shell.

const KEYS = 2_000;
const local = useLocalServer(['--plan', 'pro']);

/** The pro plan admits 1,000 requests a minute: the server's clock moves on between batches. */
async function fill(): Promise<void> {
  const { url, apiKey, adminToken } = local.server;
  for (let made = 1; made < KEYS; ) {
    const batch = Math.min(900, KEYS - made);
    for (let i = 0; i < batch; i += 50) {
      const count = Math.min(50, batch - i);
      const created = await Promise.all(
        Array.from({ length: count }, (_, j) => call(url, 'POST', '/api/service/user/api-keys', apiKey!, { name: `pipe ${made + i + j}` })),
      );
      expect(created.every((r) => r.status === 201)).toBe(true);
    }
    made += batch;
    await call(url, 'POST', '/_local/clock', adminToken, { advanceSeconds: 60 });
  }
}

/** svc on the left of a shell pipe whose reader waits before reading; svc's own exit status comes back. */
function piped(args: string[], reader: string) {
  const command = `node '${SVC_BIN}' ${args.join(' ')} | ${reader}; exit \${PIPESTATUS[0]}`;
  return execa('bash', ['-c', command], { env: cleanEnv(local.env), extendEnv: false, reject: false, stdin: 'ignore' });
}

describe('output into a pipe', () => {
  it(`a slow reader gets the whole --json list of ${KEYS} keys, every time`, async () => {
    await fill();
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
    const result = await execa('bash', ['-c', command], { env: cleanEnv(local.env), extendEnv: false, reject: false, stdin: 'ignore' });
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
