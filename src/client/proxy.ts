/**
 * Which proxy, if any, a request to a URL goes through: the one rule both
 * the transport and `--verbose` use, read as curl 7.86+ reads the
 * environment (libcurl-env(3), CURLOPT_NOPROXY(3); docs/contract.md §C1).
 * The table of cases is test/unit/proxy-rules.test.ts. Data and string work
 * only: the session checks the base URL's proxy with it on every command.
 */
import { isLoopbackHost } from './loopback.js';

/** A proxy variable as the environment set it: its name, which messages cite, and its value, which they never show. */
export interface ProxyVariable {
  readonly name: string;
  readonly value: string;
}

/**
 * The variables curl would read, each the one of its pair that wins (the
 * session reads them: cli/session proxySettings). An empty variable is an
 * unset one, as curl_getenv has it.
 */
export interface ProxySettings {
  /** `http_proxy`, lower case only: for http:// alone. */
  readonly http?: ProxyVariable;
  /** `https_proxy`, else `HTTPS_PROXY`: for https:// alone. */
  readonly https?: ProxyVariable;
  /** `all_proxy`, else `ALL_PROXY`: for either scheme whose own variable is unset. */
  readonly all?: ProxyVariable;
  /** `no_proxy`, else `NO_PROXY`. */
  readonly noProxy?: ProxyVariable;
  /** `HTTP_PROXY` is set: curl never reads it (a CGI program's environment has it from a request's `Proxy:` header), nor does svc; `--verbose` says so. */
  readonly upperHttpProxySet?: boolean;
}

export type ProxyChoice =
  | { readonly via: 'direct'; readonly why: 'loopback' | 'unset' | 'no-proxy'; readonly variable?: string }
  | {
      readonly via: 'proxy';
      /** The proxy's URL with its credentials and an explicit port: what undici is given. */
      readonly url: string;
      /** `scheme://host:port`, without credentials: what messages show. */
      readonly shown: string;
      /** `host:port`. */
      readonly address: string;
      readonly variable: string;
      readonly hasCredentials: boolean;
    }
  | { readonly via: 'invalid'; readonly variable: string; readonly problem: string };

/** curl's ports for a proxy URL that names none (CURL_DEFAULT_PROXY_PORT, CURL_DEFAULT_HTTPS_PROXY_PORT in lib/url.h). */
const DEFAULT_PROXY_PORT: Record<string, string> = { 'http:': '1080', 'https:': '443' };

export function hasProxySettings(settings: ProxySettings): boolean {
  return Boolean(settings.http || settings.https || settings.all || settings.upperHttpProxySet);
}

export function chooseProxy(settings: ProxySettings, url: URL): ProxyChoice {
  if (isLoopbackHost(url.hostname)) return { via: 'direct', why: 'loopback' };
  const own = url.protocol === 'https:' ? settings.https : url.protocol === 'http:' ? settings.http : undefined;
  const variable = own ?? settings.all;
  if (!variable) return { via: 'direct', why: 'unset' };
  if (settings.noProxy && noProxyMatches(settings.noProxy.value, url.hostname)) return { via: 'direct', why: 'no-proxy', variable: settings.noProxy.name };
  const parsed = parseProxyUrl(variable.value);
  if ('problem' in parsed) return { via: 'invalid', variable: variable.name, problem: parsed.problem };
  const { proxy, port } = parsed;
  const hasCredentials = proxy.username !== '' || proxy.password !== '';
  const address = `${proxy.hostname}:${port}`;
  return { via: 'proxy', url: proxy.href, shown: `${proxy.protocol}//${address}`, address, variable: variable.name, hasCredentials };
}

const ENCODE_HINT = "a '#', '?', '/', '@' or '%' in its user name or password must be percent-encoded (%23, %3F, %2F, %40, %25)";

/**
 * A proxy variable's value as a URL, as curl takes it: no scheme is
 * http://, and no port is curl's default for the scheme. What would send
 * the request elsewhere than the proxy meant, or fail inside undici, is a
 * problem said in words that never repeat the value (it may hold a password).
 */
export function parseProxyUrl(value: string): { proxy: URL; port: string } | { problem: string } {
  const text = value.trim();
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) ? text : `http://${text}`;
  let proxy: URL;
  try {
    proxy = new URL(withScheme);
  } catch {
    return { problem: `it is not a URL svc can read (${ENCODE_HINT})` };
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    return { problem: `it is a ${proxy.protocol.slice(0, -1)}:// proxy; svc goes through http:// and https:// proxies only` };
  }
  // A '#', '?' or '/' of a password, unencoded, ends the URL's address there: what follows was meant for the
  // proxy's host. A path without an '@' is ignored, as curl ignores it.
  const extra = proxy.hash !== '' || text.endsWith('#') ? "a '#'" : proxy.search !== '' || text.endsWith('?') ? "a '?'" : proxy.pathname.includes('@') ? "a '/'" : null;
  if (extra) return { problem: `it has ${extra} before what looks like the proxy's host; ${ENCODE_HINT}` };
  try {
    decodeURIComponent(proxy.username);
    decodeURIComponent(proxy.password);
  } catch {
    return { problem: `its user name or password has a '%' that is not percent-encoding; ${ENCODE_HINT}` };
  }
  if (proxy.hostname === '') return { problem: 'it names no host' };
  const port = writtenPort(withScheme) || DEFAULT_PROXY_PORT[proxy.protocol]!;
  proxy.port = port;
  proxy.pathname = '/';
  return { proxy, port };
}

/** The port the URL wrote, even its scheme's default, which WHATWG URL drops (`http://proxy:80`); '' for none. */
function writtenPort(url: string): string {
  // A scheme without a default port keeps whatever port was written.
  try {
    return new URL(url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, 'svc-proxy:')).port;
  } catch {
    return '';
  }
}

/**
 * Whether a NO_PROXY list names the host, as curl's Curl_check_noproxy
 * (lib/noproxy.c) reads it: `*` alone is every host; entries are separated
 * by commas, blanks around them ignored, and a blank not followed by a
 * comma ends the list; a name matches itself and every name under it,
 * with or without a leading dot, case aside, a trailing dot aside; an IP
 * address or CIDR range matches an IP address of the same family (no name
 * is looked up). An entry with a port matches nothing, as in curl; an IPv6
 * entry may be bracketed, which curl does not take.
 */
export function noProxyMatches(list: string, hostname: string): boolean {
  if (list.trim() === '*') return true;
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const family = ipFamily(host);
  const name = family === 0 ? host.replace(/\.$/, '') : host;
  for (const entry of noProxyEntries(list)) {
    if (family === 0) {
      const domain = entry.replace(/\.$/, '').replace(/^\./, '').toLowerCase();
      if (domain !== '' && (name === domain || name.endsWith(`.${domain}`))) return true;
    } else if (ipInRange(host, family, entry.replace(/^\[([^\]]*)\]/, '$1'))) {
      return true;
    }
  }
  return false;
}

function noProxyEntries(list: string): string[] {
  const entries: string[] = [];
  for (const piece of list.split(',')) {
    const words = piece.trim().split(/[ \t]+/);
    if (words[0] !== '') entries.push(words[0]!);
    if (words.length > 1) break;
  }
  return entries;
}

function ipFamily(host: string): 0 | 4 | 6 {
  return process.getBuiltinModule('node:net').isIP(host) as 0 | 4 | 6;
}

/** `address/bits`, or an address alone (also `/0`, as curl reads it); a malformed one matches nothing. */
function ipInRange(host: string, family: 4 | 6, entry: string): boolean {
  const [network = '', bitsText, ...rest] = entry.split('/');
  if (rest.length > 0 || ipFamily(network) !== family) return false;
  const width = family === 4 ? 32 : 128;
  const bits = bitsText === undefined || Number(bitsText) === 0 ? width : Number(bitsText);
  if (!/^\d*$/.test(bitsText ?? '') || bits > width) return false;
  const net = process.getBuiltinModule('node:net');
  const range = new net.BlockList();
  range.addSubnet(network, bits, family === 4 ? 'ipv4' : 'ipv6');
  return range.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** What `--verbose` says of an origin's requests, once per origin. */
export function describeChoice(choice: ProxyChoice, settings: ProxySettings, origin: string): string {
  if (choice.via === 'proxy') return `* ${origin}: through the proxy ${choice.shown} (from ${choice.variable})`;
  if (choice.via === 'invalid') return `* ${origin}: the proxy URL in ${choice.variable} cannot be used`;
  if (choice.why === 'loopback') return `* ${origin}: direct, as this machine always is (no proxy)`;
  if (choice.why === 'no-proxy') return `* ${origin}: direct, as ${choice.variable} names it`;
  const own = origin.startsWith('https:') ? 'HTTPS_PROXY or https_proxy' : 'http_proxy';
  const ignored = settings.upperHttpProxySet ? '; HTTP_PROXY is not read, as curl does not read it: http_proxy (lower case) is for http://, HTTPS_PROXY for https://' : '';
  return `* ${origin}: direct: neither ${own} nor ALL_PROXY is set${ignored}`;
}

/** A proxy URL that cannot be used, in one message naming its variable and never its value. */
export function unusableProxyMessage(choice: { variable: string; problem: string }): string {
  return `The proxy URL in ${choice.variable} cannot be used: ${choice.problem}. Its value is not shown, since it may hold a password.`;
}
