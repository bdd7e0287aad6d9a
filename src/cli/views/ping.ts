import type { ApiResponse } from '../../client/api.js';
import { describeRateLimit, readRateLimit } from '../../client/rate-limit.js';
import type { KeySession } from '../session/session.js';

/** A key that works, as `keys ping` and the manager's ping say it. */
export function showPing(session: KeySession, res: ApiResponse<unknown>): void {
  const { client, render, options } = session;
  const rateLimit = readRateLimit(res);
  if (options.json) {
    render.json({
      ok: true,
      status: res.status,
      latencyMs: res.latencyMs,
      baseUrl: client.baseUrl,
      key: { hint: client.keyHint, source: client.origin.keySource },
      rateLimit,
    });
    return;
  }
  if (options.quiet) return;
  render.text([`Key ${client.keyHint} works: ${res.status} from ${client.baseUrl} in ${res.latencyMs} ms; ${describeRateLimit(rateLimit)}.`]);
}
