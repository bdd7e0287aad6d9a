import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, median, quantile, startSvcServer } from './lib.mjs';
const [a, b, n = '30', mode = 'env', node = process.execPath] = process.argv.slice(2);
const server = await startSvcServer(['--plan', 'pro']);
const cfg = mkdtempSync(join(tmpdir(), 'ab-'));
const env = mode === 'env' ? childEnv({ SVC_CONFIG_DIR: cfg, SVC_API_KEY: server.apiKey, SVC_BASE_URL: server.url }) : childEnv({ SVC_CONFIG_DIR: cfg });
if (mode !== 'env') spawnSync(node, [a, 'login', '--with-key', '--base-url', server.url], { env, input: `${server.apiKey}\n` });
const args = mode === 'version' ? ['--version'] : ['keys', 'list', '--json'];
const run = (bin) => { const t = process.hrtime.bigint(); const r = spawnSync(node, [bin, ...args], { env, stdio: 'ignore' }); if (r.status !== 0) throw new Error(`${bin} ${r.status}`); return Number(process.hrtime.bigint() - t) / 1e6; };
for (let i = 0; i < 5; i++) { run(a); run(b); }
const ra = [], rb = [], ratio = [];
for (let i = 0; i < Number(n); i++) { let x, y; if (i % 2) { x = run(a); y = run(b); } else { y = run(b); x = run(a); } ra.push(x); rb.push(y); ratio.push(y / x); }
console.log(`A ${median(ra).toFixed(1)} ms  B ${median(rb).toFixed(1)} ms  B/A ${median(ratio).toFixed(3)} (IQR ${quantile(ratio, .25).toFixed(3)}–${quantile(ratio, .75).toFixed(3)})`);
await server.stop();
