#!/usr/bin/env node
// svc's reaper (src/cli/child/reaper.ts): started by `svc run --ephemeral`
// beside each run, outside svc's process group and session, it reads svc's
// orders, one JSON document a line, on the socket at fd 3. svc's "done"
// ends it. The socket closing before that means svc has ended: only then
// is svc's bundle loaded, to kill the command's process group and revoke
// its key (src/cli/child/reap.ts). Its own file, not a command of the
// bundle, because every ephemeral run starts one and nearly every one is
// told "done": a start that loads the bundle costs about twice a bare
// Node start (`hyperfine -N 'node -e 0' 'node bin/svc.js --help'`: 2.1x,
// 58 ms and 120 ms, on the 2-core development machine), CPU a run's own
// requests and command compete for.
'use strict';

const { Socket } = process.getBuiltinModule('node:net');

const socket = new Socket({ fd: 3, readable: true, writable: true });
const left = { server: null, creating: null, key: null, group: null };
let pending = '';

socket.on('data', (chunk) => {
  pending += chunk.toString('utf8');
  for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    let order;
    try {
      order = JSON.parse(line);
    } catch {
      continue;
    }
    if (order === null || typeof order !== 'object') continue;
    if ('done' in order) process.exit(0);
    if ('server' in order) left.server = order.server;
    if ('creating' in order) left.creating = order.creating;
    if ('group' in order) left.group = order.group;
    if ('key' in order) {
      left.key = order.key;
      socket.write('armed\n');
    }
  }
});
socket.on('error', () => socket.destroy());
socket.on('close', () => {
  if (left.server === null || (left.key === null && left.group === null && left.creating === null)) process.exit(0);
  const svc = require('../dist/main.js');
  const { io } = svc.processIO(() => {});
  svc.reap(left, io).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
