// 1,000 requests at once against one Free workspace, each on a connection of
// its own so they truly arrive together: exactly 30 may be admitted.
import { Agent, request } from 'undici';
import { startSvcServer } from './lib.mjs';

export async function benchLimiter({ requests, rounds }) {
  const server = await startSvcServer();
  const agent = new Agent({ connections: requests, pipelining: 0 });
  try {
    const key = (await server.admin('POST', '/users', { name: 'bench-limiter', plan: 'free' })).json.apiKey.secret;
    const results = [];
    for (let round = 0; round < rounds; round++) {
      // A fresh window with nearly a minute left, so the burst never straddles two.
      await server.startOfNextWindow();
      const statuses = await Promise.all(
        Array.from({ length: requests }, async () => {
          const res = await request(`${server.url}/api/service/user/api-keys`, {
            headers: { authorization: `Bearer ${key}` },
            dispatcher: agent,
          });
          await res.body.dump();
          return res.statusCode;
        }),
      );
      const count = (status) => statuses.filter((s) => s === status).length;
      results.push({ admitted: count(200), limited: count(429), other: requests - count(200) - count(429) });
    }
    return { requests, limit: 30, rounds: results };
  } finally {
    await agent.close();
    await server.stop();
  }
}
