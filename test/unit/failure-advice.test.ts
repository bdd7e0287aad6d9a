// tier: in-process
/**
 * docs/contract.md §C4: the advice after a failure is the one that mends
 * it. A certificate for another host name or out of date is not mended by
 * a CA in NODE_EXTRA_CA_CERTS, which only an untrusted issuer is; and a
 * server's Retry-After far off is said as the time, not as billions of seconds.
 */
import { describe, expect, it } from 'vitest';
import { classifyTransportError } from '../../src/client/transport.js';
import { RateLimitedError } from '../../src/client/errors.js';
import { describeFailure } from '../../src/cli/views/failure.js';

const tlsError = (code: string) => Object.assign(new Error(`TLS: ${code}`), { code });

describe('certificate advice', () => {
  it.each([
    ['DEPTH_ZERO_SELF_SIGNED_CERT', /NODE_EXTRA_CA_CERTS/],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /NODE_EXTRA_CA_CERTS/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /Use the host name the server's certificate was issued for in the base URL\.$/],
    ['CERT_HAS_EXPIRED', /The server needs a current certificate \(or this machine's clock is wrong\)\.$/],
    ['CERT_NOT_YET_VALID', /The server needs a current certificate/],
  ])('%s', (code, advice) => {
    const message = classifyTransportError(tlsError(code), 1000).message;
    expect(message).toMatch(advice);
    if (!String(advice).includes('NODE_EXTRA')) expect(message).not.toContain('NODE_EXTRA_CA_CERTS');
  });
});

describe('a rate limit that lifts far off', () => {
  it('is said in seconds up to an hour, and as the time beyond', () => {
    const at = Date.parse('2099-10-21T07:28:00Z');
    const near = describeFailure(new RateLimitedError(42, 0, 'no-wait', {}, null, 'RATE_LIMITED', Date.now() + 42_000), { verbose: false });
    expect(near.lines.join('\n')).toContain('Try again in 42 s, or leave out --no-wait');
    const far = describeFailure(new RateLimitedError(2_300_024_376, 0, 'budget', {}, null, 'RATE_LIMITED', at), { verbose: false });
    expect(far.lines.join('\n')).toContain("Try again after 2099-10-21T07:28:00.000Z (the server's Retry-After, 638896 h from now), or raise --max-wait.");
  });
});
