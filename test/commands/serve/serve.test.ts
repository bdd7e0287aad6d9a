// tier: in-process
/**
 * `svc serve --local` in-process: its options, banner, ready line and
 * shutdown, with the stop signal delivered through deps.onSignal. What only
 * the process shows (real signals, a SIGKILL, the lock left behind) is in
 * test/server/process.test.ts and test/e2e/serve-flags.test.ts.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, svc } from '../../helpers/in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-serve-in-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Runs svc serve until `whileUp` is done, then sends it `signal`. */
async function serveWhile(args: string[], whileUp: (url: string) => Promise<void>, signal: NodeJS.Signals = 'SIGTERM', env: Record<string, string> = {}, at?: number) {
  const port = at ?? (await freePort());
  let subscribed!: () => void;
  const up = new Promise<void>((resolve) => (subscribed = resolve));
  let stop!: (signal: NodeJS.Signals) => void;
  let unsubscribed = false;
  const running = svc(['serve', '--local', '--port', String(port), ...args], env, {
    deps: {
      onSignal(signals, listener) {
        expect(signals).toEqual(['SIGINT', 'SIGTERM']);
        stop = listener;
        subscribed();
        return () => (unsubscribed = true);
      },
    },
  });
  await up;
  await whileUp(`http://127.0.0.1:${port}`);
  stop(signal);
  const result = await running;
  expect(unsubscribed).toBe(true);
  return result;
}

describe('svc serve --local in-process', () => {
  it('prints the ready line with --json, answers, and stops on SIGTERM', async () => {
    let answered = 0;
    const result = await serveWhile(['--json', '--plan', 'pro', '--admin-token', 'tok'], async (url) => {
      answered = (await call(url, 'GET', '/_local/clock', 'tok')).status;
    });
    expect(answered).toBe(200);
    expect(result.exitCode).toBe(0);
    const ready = JSON.parse(result.stdout);
    expect(ready).toMatchObject({ plan: 'pro', adminToken: 'tok', apiKey: expect.stringMatching(/^sk_/) });
    expect(result.stderr).toContain('SIGTERM: finishing in-flight requests…');
    expect(result.stderr).toContain('Server stopped.');
  });

  it('shows a banner on stderr, with the faults on when asked for', async () => {
    const result = await serveWhile(['--latency', '1-2', '--fail-rate', '0'], async () => {}, 'SIGINT');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/svc reference server listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stderr).toContain('in memory, gone when the server stops');
    expect(result.stderr).toMatch(/API key +sk_\S+ {2}\(shown only now\)/);
    expect(result.stderr).toContain('SIGINT: finishing in-flight requests…');
  });

  it("gives the next steps with the key read by login from stdin, never an export of the key into the shell's history (issue 39, 6)", async () => {
    let url = '';
    const result = await serveWhile([], async (at) => void (url = at), 'SIGINT');
    const key = /API key +(sk_\S+)/.exec(result.stderr)![1]!;
    expect(result.stderr).toMatch(new RegExp(`^ {2}\\S.* login --with-key --base-url ${url}$`, 'm'));
    expect(result.stderr).toContain('paste the API key above, then press Ctrl-D');
    expect(result.stderr.split(key)).toHaveLength(2);
    expect(result.stderr).not.toMatch(/export SVC_API_KEY|export SVC_BASE_URL/);
  });

  it("suggests a profile of its own when the profile in use is another server's, and none when it is empty or this server's", async () => {
    const config = mkdtempSync(join(dir, 'config-'));
    const env = { SVC_CONFIG_DIR: config };
    const fresh = await serveWhile([], async () => {}, 'SIGINT', env);
    expect(fresh.stderr).not.toContain('--profile');
    const key = `sk_${'k'.repeat(64)}`;
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { default: { apiKey: key, baseUrl: 'http://127.0.0.1:8787' } } }), { mode: 0o600 });
    let url = '';
    const second = await serveWhile([], async (at) => void (url = at), 'SIGINT', env);
    const port = new URL(url).port;
    expect(second.stderr).toMatch(new RegExp(`^ {2}\\S.* login --with-key --profile local-${port} --base-url ${url}$`, 'm'));
    for (const step of ['status', 'keys list', 'keys create my-first-key']) expect(second.stderr).toMatch(new RegExp(`^ {2}\\S.* ${step} --profile local-${port}$`, 'm'));
    expect(second.stderr).toContain(`(a profile of its own: profile 'default' holds key sk_kkkk…kkkk for http://127.0.0.1:8787, and stays so)`);
    const again = await freePort();
    writeFileSync(join(config, 'config.json'), JSON.stringify({ profiles: { default: { apiKey: key, baseUrl: `http://127.0.0.1:${again}` } } }), { mode: 0o600 });
    const same = await serveWhile([], async () => {}, 'SIGINT', env, again);
    expect(same.stderr).not.toContain('--profile');
  });

  it('stops as on a signal when the reader of its output goes away, saving its state and freeing its lock, and exits 141', async () => {
    const file = join(dir, 'reader-gone.json');
    const port = await freePort();
    let onSubscribed!: () => void;
    const subscribed = new Promise<void>((resolve) => (onSubscribed = resolve));
    let readerGone!: () => void;
    const running = svc(['serve', '--local', '--port', String(port), '--data', file, '--admin-token', 'tok'], {}, {
      deps: { onSignal: () => () => {} },
      readerGone: (listener) => {
        readerGone = listener;
        onSubscribed();
      },
    });
    await subscribed;
    const created = await call(`http://127.0.0.1:${port}`, 'POST', '/_local/reset', 'tok');
    expect(created.status).toBe(200);
    readerGone();
    const result = await running;
    expect(result.exitCode).toBe(141);
    expect(result.stderr).toContain('Output closed: finishing in-flight requests and saving state…');
    expect(result.stderr).toContain('Server stopped.');
    expect(result.stderr).not.toContain('The reader of the output went away');
    expect(readdirSync(dir).filter((name) => name.startsWith('reader-gone.json'))).toEqual(['reader-gone.json']);
    const again = await serveWhile(['--data', file, '--json'], async () => {});
    expect(JSON.parse(again.stdout).userId).toBe(created.json.userId);
  });

  it('keeps state in --data, and says a --plan is ignored once the file holds state', async () => {
    const file = join(dir, 'state.json');
    const first = await serveWhile(['--data', file], async () => {});
    expect(first.stderr).toContain(`${file} (key hashes only)`);
    expect(first.stderr).toContain('and saving state…');
    const again = await serveWhile(['--data', file, '--plan', 'pro'], async () => {});
    expect(again.stderr).toContain('--plan pro is ignored');
    expect(again.stderr).toContain(`not shown: ${file} keeps only key hashes`);
  });

  it('warns when it listens beyond this machine', async () => {
    const result = await serveWhile(['--host', '0.0.0.0'], async () => {});
    expect(result.stderr).toContain('Listening on 0.0.0.0: this server has no TLS');
  });

  it('refuses what it cannot do before it starts: usage errors, exit 2; a port in use, exit 1', async () => {
    expect((await svc(['serve'], {})).exitCode).toBe(2);
    expect((await svc(['serve', '--local', '--admin-token', 'two words'], {})).exitCode).toBe(2);
    for (const bad of [['--latency', '400-50'], ['--fail-rate', '2'], ['--fail-rate', '0x1'], ['--port', '70000'], ['--plan', 'gold']]) {
      expect((await svc(['serve', '--local', ...bad], {})).exitCode, bad.join(' ')).toBe(2);
    }
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    try {
      const busy = await svc(['serve', '--local', '--port', String((taken.address() as { port: number }).port)], {});
      expect(busy.exitCode).toBe(1);
      expect(busy.stderr).toMatch(/^error: svc serve: /);
    } finally {
      taken.close();
    }
  });
});
