// The floor for `svc keys list --json`: one GET with the same undici subset
// and V8 flag as src/client/transport.ts, the body written to stdout, and
// nothing else. svc cannot start faster than this without a different HTTP
// client, so its row is measured against this script. CommonJS, as svc's
// bundle is: an ES module would make the floor pay for Node's ES module
// loader, which svc does not load.
//
//   SVC_BASE_URL=http://127.0.0.1:8787 SVC_API_KEY=sk_… node bench/floor-request.cjs
'use strict';
const { setFlagsFromString } = require('node:v8');
const Agent = require('undici/lib/dispatcher/agent.js');
const request = require('undici/lib/api/api-request.js');

setFlagsFromString('--liftoff-only');

(async () => {
  const url = new URL('/api/service/user/api-keys', process.env.SVC_BASE_URL);
  const dispatcher = new Agent();
  const res = await request.call(dispatcher, {
    origin: url.origin,
    path: url.pathname,
    method: 'GET',
    headers: { authorization: `Bearer ${process.env.SVC_API_KEY}`, 'accept-encoding': 'identity' },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`floor request answered ${res.statusCode}: ${text}`);
  process.stdout.write(`${JSON.stringify(JSON.parse(text))}\n`);
  await dispatcher.close();
})();
