// A proxy process that will not open a CONNECT tunnel: it answers each
// CONNECT with the status given as its argument (407, 403, 502, …) or, with
// "close", drops the connection without a word. It prints a ready line,
// {"url": …}, then one line per CONNECT it was asked for, so a test counts
// the attempts of a client from outside it.
//
//   node test/helpers/refusing-proxy.mjs 407|403|502|close
import { createServer } from 'node:http';

const mode = process.argv[2];
if (!/^(\d{3}|close)$/.test(mode ?? '')) {
  console.error('usage: refusing-proxy.mjs <status>|close');
  process.exit(2);
}

const server = createServer((_req, res) => {
  res.writeHead(405, { 'content-type': 'text/plain' });
  res.end('only CONNECT is refused here\n');
});
server.on('connect', (req, socket) => {
  process.stdout.write(`CONNECT ${req.url}\n`);
  if (mode === 'close') {
    socket.destroy();
    return;
  }
  const body = `The proxy refuses the tunnel (${mode}).\n`;
  const challenge = mode === '407' ? 'Proxy-Authenticate: Basic realm="proxy"\r\n' : '';
  socket.end(`HTTP/1.1 ${mode} Refused\r\n${challenge}Content-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
