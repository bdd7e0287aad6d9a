// tier: in-process
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError, UnexpectedResponseError, type RequestOrigin } from '../../src/client/errors.js';
import { CliError, endingSignal, InterruptedError, loginCommand, NotAuthenticatedError, PassedOnStatus, PromptCancelledError } from '../../src/cli/errors/errors.js';
import { describeFailure } from '../../src/cli/views/failure.js';

const origin = (over: Partial<RequestOrigin> = {}): RequestOrigin => ({
  baseUrl: 'https://api.example.com',
  baseUrlSource: 'profile',
  overriddenBaseUrl: null,
  keyHint: 'sk_abcd…wxyz',
  keySource: 'profile',
  profile: 'default',
  ...over,
});

const unauthorized = (o: RequestOrigin) =>
  new ApiError(401, { error: 'Invalid API key', code: 'UNAUTHENTICATED' }, 'GET', '/user/api-keys', { origin: o });

const report = (error: unknown) => describeFailure(error, { verbose: false });

describe('the 401 report names the key, its source and the server from the error alone', () => {
  it('a saved key of the default profile: svc login', () => {
    const { exitCode, lines } = report(unauthorized(origin()));
    expect(exitCode).toBe(3);
    expect(lines).toContain("  key:    sk_abcd…wxyz from profile 'default' in the config store");
    expect(lines).toContain('  server: https://api.example.com');
    expect(lines.at(-1)).toMatch(/^Next: run `svc login` with a working key/);
  });

  it('a saved key of another profile: the login names that profile', () => {
    const { lines } = report(unauthorized(origin({ profile: 'second' })));
    expect(lines).toContain("  key:    sk_abcd…wxyz from profile 'second' in the config store");
    expect(lines.at(-1)).toMatch(/^Next: run `svc login --profile second` with a working key/);
  });

  it('a key from SVC_API_KEY: says to fix the variable', () => {
    const { lines } = report(unauthorized(origin({ keySource: 'env', profile: 'second' })));
    expect(lines).toContain('  key:    sk_abcd…wxyz from the SVC_API_KEY environment variable');
    expect(lines.at(-1)).toBe('Next: put a working key in SVC_API_KEY, or unset it to use the saved profile.');
  });

  it('a key being logged in, sent elsewhere by --base-url or SVC_BASE_URL: says which server the profile is saved for', () => {
    for (const [baseUrlSource, by] of [['flag', '--base-url'], ['env', 'SVC_BASE_URL']] as const) {
      const { lines } = report(
        unauthorized(origin({ keySource: 'login', profile: 'ci', baseUrlSource, baseUrl: 'http://127.0.0.1:9', overriddenBaseUrl: 'https://api.example.com' })),
      );
      expect(lines).toContain('  key:    sk_abcd…wxyz (the key given to svc login; nothing was saved)');
      expect(lines).toContain('  server: http://127.0.0.1:9');
      expect(lines).toContain(`          (from ${by}; profile 'ci' is saved for https://api.example.com)`);
      expect(lines.at(-1)).toMatch(/^Next: run `svc login --profile ci`/);
    }
  });

  it('says nothing of a restart it cannot see: no run recorded, on this machine or another', () => {
    for (const baseUrl of ['http://127.0.0.1:8787', 'http://localhost:9000', 'https://api.example.com']) {
      const { lines } = report(unauthorized(origin({ baseUrl })));
      expect(lines.some((line) => /restarted|forgot every key/.test(line)), baseUrl).toBe(false);
      expect(lines.at(-1)).toMatch(/^Next: run `svc login`/);
    }
  });

  it('names the server of a network failure and of an answer that is not the service', () => {
    const network = new NetworkError('connection refused', false, 'GET', '/user/api-keys', 1, false, origin());
    expect(report(network).lines[0]).toBe('Could not get an answer from https://api.example.com: connection refused.');
    const foreign = new UnexpectedResponseError('GET /user/api-keys answered 200 without a JSON body', 'GET', '/user/api-keys', '<html>', origin());
    expect(report(foreign).lines[1]).toMatch(/^Is https:\/\/api\.example\.com the service's address\?/);
  });

  it("blames the way, not the address, for the service's JSON cut short", () => {
    const cut = new UnexpectedResponseError('POST /user/api-keys answered 201 with JSON that does not parse', 'POST', '/user/api-keys', '{"id":"key_1","sec', origin(), true);
    expect(report(cut).lines).toEqual([
      'Unexpected response: POST /user/api-keys answered 201 with JSON that does not parse.',
      'The answer says it is JSON and does not parse: a proxy or the network between svc and the service may have cut it short or garbled it.',
    ]);
  });

  it("cuts the server's Content-Type of an answer that is not JSON at 200 characters, as other server text", () => {
    const contentType = `text/html; ${'x'.repeat(1_000)}`;
    const error = new ApiError(404, null, 'GET', '/user/api-keys', { foreignBody: contentType, origin: origin() });
    const [line] = report(error).lines;
    expect(line).toContain(`with ${contentType.slice(0, 199)}…, not the service's JSON.`);
    expect(line!.length).toBeLessThan(300);
  });

  it('says of a 401 answered with a page, not JSON, that something in front of the service may have refused it', () => {
    const { lines, exitCode } = report(new ApiError(401, null, 'GET', '/user/api-keys', { foreignBody: 'text/html; charset=utf-8', origin: origin() }));
    expect(exitCode).toBe(3);
    expect(lines[1]).toBe("The answer was text/html; charset=utf-8, not the service's JSON: a proxy or a login page in front of the service may have refused it, or the key is unknown, disabled, expired or revoked.");
  });

  it('reports a 5xx page that is not JSON as a server error, its Content-Type cut too, not as a wrong address', () => {
    const contentType = `text/html; ${'x'.repeat(1_000)}`;
    const lines = report(new ApiError(502, null, 'GET', '/user/api-keys', { foreignBody: contentType, origin: origin() })).lines;
    expect(lines[0]).toContain(`failed with a server error (502), answered with ${contentType.slice(0, 199)}… rather than the service's JSON`);
    expect(lines[0]!.length).toBeLessThan(400);
    expect(lines.join('\n')).not.toContain("the service's address?");
  });
});

describe('loginCommand', () => {
  it('names --profile unless it is the default, quoted for a shell where need be', () => {
    expect(loginCommand('default')).toBe('svc login');
    expect(loginCommand('ci-2.prod')).toBe('svc login --profile ci-2.prod');
    expect(loginCommand("it's mine")).toBe("svc login --profile 'it'\\''s mine'");
    expect(new NotAuthenticatedError('ci').message).toContain('Run `svc login --profile ci` to save a key');
  });
});

describe('the signal svc ends by once a failure is reported (endingSignal)', () => {
  it('is the one that stopped the command, when svc stops on it', () => {
    expect(endingSignal(new InterruptedError(undefined, 'SIGHUP'))).toBe('SIGHUP');
    expect(endingSignal(new PassedOnStatus(143, 'SIGTERM'))).toBe('SIGTERM');
    expect(endingSignal(new PromptCancelledError(undefined, 'SIGINT'))).toBe('SIGINT');
  });

  it('is none for a question answered (Esc, No), any other failure, or a signal that ended svc run\'s command and that svc does not stop on', () => {
    expect(endingSignal(new PromptCancelledError(['Cancelled; nothing was revoked.']))).toBeNull();
    expect(endingSignal(new CliError('failed'))).toBeNull();
    expect(endingSignal(new Error('a bug'))).toBeNull();
    expect(endingSignal(new PassedOnStatus(137, 'SIGKILL'))).toBeNull();
    expect(endingSignal(new PassedOnStatus(139, 'SIGSEGV'))).toBeNull();
  });
});
