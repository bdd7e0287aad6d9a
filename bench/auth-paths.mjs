// The time of a 401 by cause (docs/contract.md §A2): an unknown, a disabled and an
// expired key must take one path. Measured in-process on the server's own
// authenticateKey, interleaved so machine load falls on all three alike.
// Run: node bench/auth-paths.mjs
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const src = new URL('../src/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'svc-auth-bench-'));
const entry = join(dir, 'entry.ts');
writeFileSync(
  entry,
  `export { Store } from '${src}server/store.ts';
export { Clock } from '${src}server/clock.ts';
export { authenticateKey } from '${src}server/auth.ts';
export { generateKey } from '${src}contract/key-generation.ts';`,
);
await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile: join(dir, 'out.mjs'), logLevel: 'warning' });
const { Store, Clock, authenticateKey, generateKey } = await import(pathToFileURL(join(dir, 'out.mjs')).href);
rmSync(dir, { recursive: true, force: true });

const clock = new Clock();
const store = new Store(clock);
const { user } = store.createUser('bench', 'pro');
for (let i = 0; i < 1000; i++) store.createKey(user, `k${i}`, null);
const disabled = store.createKey(user, 'disabled', null);
store.setEnabled(disabled.key, false);
const expired = store.createKey(user, 'expired', clock.now() + 1);
const { randomBytes } = await import('node:crypto');
const request = (key) => ({ rawHeaders: ['Host', 'localhost', 'Authorization', `Bearer ${key}`] });
const cases = { unknown: request(generateKey(randomBytes)), disabled: request(disabled.secret), expired: request(expired.secret) };

const ROUNDS = 60_000;
const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
for (let i = 0; i < 5_000; i++) for (const req of Object.values(cases)) authenticateKey(store, req);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, req] of Object.entries(cases)) {
    const started = process.hrtime.bigint();
    if (authenticateKey(store, req) !== null) throw new Error(`${name} authenticated`);
    samples[name].push(Number(process.hrtime.bigint() - started));
  }
}
console.log(`authenticateKey, ${ROUNDS} interleaved rounds, nanoseconds:`);
for (const [name, list] of Object.entries(samples)) {
  list.sort((a, b) => a - b);
  const q = (p) => list[Math.floor(list.length * p)];
  console.log(`  ${name.padEnd(9)} p25 ${q(0.25)}  median ${q(0.5)}  p75 ${q(0.75)}`);
}
