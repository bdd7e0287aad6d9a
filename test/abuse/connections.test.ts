// tier: process
/**
 * Abuse by numbers, against the built server: connections that never
 * finish a request, and a burst of concurrent creates.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startServe, type ServeProcess } from './helpers.js';
import { savedState } from '../helpers/saved-state.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-abuse-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: ServeProcess[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.stop();
});

async function serve(args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(args);
  servers.push(server);
  return server;
}

function open(port: number): Promise<Socket> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    socket.once('connect', () => done(socket));
    socket.once('error', fail);
  });
}

describe('connections that never finish a request', () => {
  it('do not keep real clients waiting: 200 of them, then real requests are answered at once', async () => {
    const server = await serve(['--plan', 'pro']);
    const idle = await Promise.all(Array.from({ length: 200 }, () => open(server.port)));
    idle.forEach((socket, i) => {
      // A third say nothing, a third stop half-way through their headers, a third half-close after a partial request.
      if (i % 3 === 1) socket.write('GET /api/service/workspace HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ');
      if (i % 3 === 2) socket.end('POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"na');
    });
    // Give the server time to have read every one of them.
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 20; i++) {
      expect((await call(server.url, 'GET', '/api/service/workspace', server.apiKey)).status).toBe(200);
    }
    // Answered while all that said nothing or stopped in their headers still wait for the 10 s header
    // timeout: a server they blocked would answer only once it had cut them off.
    const waiting = idle.filter((_, i) => i % 3 !== 2);
    expect(waiting.filter((socket) => socket.destroyed || socket.readableEnded).length).toBe(0);
    expect(server.alive()).toBe(true);
    expect(server.stderr()).toBe('');
  });
});

describe('500 concurrent creates', () => {
  it('give 500 distinct ids and secrets, each saved and working', async () => {
    const file = join(dir, 'burst.json');
    const server = await serve(['--plan', 'pro', '--data', file]);
    const agent = new Agent({ connections: 500 });
    try {
      const created = await Promise.all(
        Array.from({ length: 500 }, async (_, i) => {
          const { status, text } = await call(server.url, 'POST', '/api/service/user/api-keys', server.apiKey, { name: `burst-${i}` }, { dispatcher: agent });
          expect(status).toBe(201);
          return JSON.parse(text) as { id: string; secret: string; name: string };
        }),
      );
      expect(new Set(created.map((k) => k.id)).size).toBe(500);
      expect(new Set(created.map((k) => k.secret)).size).toBe(500);
      expect(new Set(created.map((k) => k.name)).size).toBe(500);

      // Every one was on disk before it was acknowledged.
      const saved = (await savedState(file)) as { keys: { id: string; hash: string }[] };
      const hashes = new Map(saved.keys.map((k) => [k.id, k.hash]));
      for (const key of created) expect(hashes.get(key.id)).toBe(createHash('sha256').update(key.secret).digest('hex'));

      // A fresh window, so the checks below do not meet the 1,000 a minute the creates began.
      const { now } = JSON.parse((await call(server.url, 'GET', '/_local/clock', ADMIN_TOKEN)).text);
      await call(server.url, 'POST', '/_local/clock', ADMIN_TOKEN, { advanceSeconds: 60 - ((Date.parse(now) / 1000) % 60) + 0.01 });
      const list = JSON.parse((await call(server.url, 'GET', '/api/service/user/api-keys', server.apiKey)).text) as { keys: { id: string }[] };
      const listed = new Set(list.keys.map((k) => k.id));
      expect(created.every((k) => listed.has(k.id))).toBe(true);
      const answers = await Promise.all(created.map((k) => call(server.url, 'GET', '/api/service/workspace', k.secret, undefined, { dispatcher: agent })));
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    } finally {
      await agent.close();
    }
  });
});
