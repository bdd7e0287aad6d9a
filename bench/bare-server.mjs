// The yardstick: node:http with nothing on top, answering every request with
// the status and JSON body the benchmark hands it. It prints its URL once
// it listens and stops on SIGTERM.
import { createServer } from 'node:http';

const status = Number(process.env.BARE_STATUS ?? 200);
const body = Buffer.from(process.env.BARE_BODY ?? '{}');
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };

const server = createServer((req, res) => {
  // Drain whatever was sent, as the real server does, so a keep-alive connection stays usable.
  req.resume();
  res.writeHead(status, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
