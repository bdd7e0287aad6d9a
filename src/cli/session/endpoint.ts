/**
 * Where requests go and whether a key may go there (docs/contract.md §C1),
 * as pure functions of what was given: the session resolves them once per
 * command.
 */
import type { BaseUrlSource } from '../../client/errors.js';
import { isLoopbackHost } from '../../client/loopback.js';
import { API_PREFIX, DEFAULT_BASE_URL } from '../../contract/paths.js';
import { CliError, ExitCode, UsageError } from '../errors/errors.js';
import { clip } from '../text/text.js';

export interface Endpoint {
  url: string;
  source: BaseUrlSource;
  /** Said once on stderr: the address given ended in the API prefix, which svc adds itself. */
  notice: string | null;
}

export const BASE_URL_NAMES: Record<BaseUrlSource, string> = {
  flag: '--base-url',
  env: 'SVC_BASE_URL',
  profile: "The profile's base URL",
  default: 'The default base URL',
};

/** Flag, then environment, then profile, then the local reference server; checked before any request. */
export function resolveEndpoint(given: { flag?: string; env?: string; profile?: string }): Endpoint {
  if (given.flag) return checkBaseUrl(given.flag, 'flag');
  if (given.env) return checkBaseUrl(given.env, 'env');
  if (given.profile) return checkBaseUrl(given.profile, 'profile');
  return { url: DEFAULT_BASE_URL, source: 'default', notice: null };
}

/**
 * An absolute http(s) URL, or a usage error before any request. One that
 * already ends in the API prefix would double it; svc adds the prefix
 * itself, so it is taken off, and the person told.
 */
function checkBaseUrl(raw: string, source: BaseUrlSource): Endpoint {
  const from = BASE_URL_NAMES[source];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${from} is not a URL: '${clip(raw, 200)}'. Give the whole address, e.g. https://api.example.com.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${from} must be an http:// or https:// address, not '${clip(raw, 200)}'.`);
  }
  const path = basePath(url);
  if (path === url.pathname.replace(/\/+$/, '')) return { url: raw.replace(/\/+$/, ''), source, notice: null };
  url.pathname = path;
  const fixed = url.toString().replace(/\/+$/, '');
  return { url: fixed, source, notice: `${from} ends in ${API_PREFIX}, which svc adds to every path itself: using ${fixed}.` };
}

/**
 * A key goes only where it may: never in clear text off this machine
 * unless allowed, and a saved key only to the server it was saved for
 * (`savedFor`, null for a key that is not the profile's).
 */
export function checkKeyMayGo(endpoint: Endpoint, savedFor: string | null, profile: string, allowHttp: boolean): void {
  const { hostname, protocol } = new URL(endpoint.url);
  if (protocol === 'http:' && !isLoopbackHost(hostname) && !allowHttp) {
    throw new UsageError(
      `${endpoint.url} is plain http: svc does not send a key in clear text to another machine. Use https, or set SVC_ALLOW_HTTP=1 if the network is yours.`,
    );
  }
  if (savedFor !== null && !sameServer(savedFor, endpoint.url)) {
    throw new CliError(
      [
        `The key of profile '${profile}' belongs to ${savedFor}, but ${BASE_URL_NAMES[endpoint.source]} points at ${endpoint.url}; the key was not sent.`,
        `Log in for that server in a profile of its own (svc login --profile NAME --base-url ${endpoint.url}), or give its key in SVC_API_KEY.`,
      ],
      ExitCode.unauthenticated,
    );
  }
}

/** Two base URLs name the same server: same scheme, host, port and path (case, trailing slashes and the API prefix aside). */
export function sameServer(a: string, b: string): boolean {
  const key = (url: string) => {
    const parsed = new URL(url);
    return parsed.origin + basePath(parsed);
  };
  return key(a) === key(b);
}

/** A base URL's path without trailing slashes or the API prefix, which svc adds itself. */
function basePath(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  return path.endsWith(API_PREFIX) ? path.slice(0, -API_PREFIX.length) : path;
}
