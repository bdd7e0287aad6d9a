// tier: in-process
/**
 * docs/contract.md §C1: which proxy a request goes through, as curl 7.86+
 * reads the environment. One row per case curl documents, then the edges.
 * The rule is one function of (environment, URL): the session reads the
 * variables (proxySettings), client/proxy.ts decides (chooseProxy), and both
 * the transport and `--verbose` use that decision.
 *
 * curl's documentation, cited per row:
 * - [env]     libcurl-env(3), "[scheme]_proxy", "ALL_PROXY", "NO_PROXY":
 *             https://curl.se/libcurl/c/libcurl-env.html
 * - [noproxy] CURLOPT_NOPROXY(3), DESCRIPTION: https://curl.se/libcurl/c/CURLOPT_NOPROXY.html
 * - [book]    everything curl, "Proxy environment variables" (NO_PROXY, CIDR since
 *             7.86.0, "http_proxy in lower case only"): https://everything.curl.dev/usingcurl/proxies/env
 * - [-x]      curl(1), -x/--proxy: no scheme is http://, no port is 1080 (lib/url.h,
 *             CURL_DEFAULT_PROXY_PORT; CURL_DEFAULT_HTTPS_PROXY_PORT 443 for an https:// proxy)
 * - [code]    what curl's code does where the pages say nothing: lib/getenv.c (an empty
 *             variable is unset), lib/noproxy.c Curl_check_noproxy (blanks, trailing dots, ports)
 * - [svc]     svc's own rule: loopback is always direct (as gh); an unusable proxy URL is an error
 */
import { describe, expect, it } from 'vitest';
import { chooseProxy, describeChoice, parseProxyUrl } from '../../src/client/proxy.js';
import { proxySettings } from '../../src/cli/session/session.js';

const P = 'http://proxy.corp:3128';
const Q = 'http://other.corp:8080';

/** The decision for one request, in a word a row can state. */
function decide(env: Record<string, string>, url: string): string {
  const choice = chooseProxy(proxySettings(env), new URL(url));
  if (choice.via === 'proxy') return `${choice.shown} from ${choice.variable}`;
  if (choice.via === 'invalid') return `unusable ${choice.variable}`;
  return choice.why === 'no-proxy' ? `direct by ${choice.variable}` : `direct (${choice.why})`;
}

type Row = [source: string, env: Record<string, string>, url: string, expected: string];

const which: Row[] = [
  ['[env] https:// uses https_proxy', { https_proxy: P }, 'https://api.example.com', `${P} from https_proxy`],
  ['[env] https:// uses HTTPS_PROXY (upper case too)', { HTTPS_PROXY: P }, 'https://api.example.com', `${P} from HTTPS_PROXY`],
  ['[env] the lower-case name wins when both are set', { https_proxy: P, HTTPS_PROXY: Q }, 'https://api.example.com', `${P} from https_proxy`],
  ['[env] http:// uses http_proxy', { http_proxy: P }, 'http://api.example.com', `${P} from http_proxy`],
  ['[env][book] HTTP_PROXY (upper case) is never read', { HTTP_PROXY: P }, 'http://api.example.com', 'direct (unset)'],
  ['[env] http_proxy is for http:// only, never https://', { http_proxy: P }, 'https://api.example.com', 'direct (unset)'],
  ['[env] nor is HTTP_PROXY used for https://', { HTTP_PROXY: P }, 'https://api.example.com', 'direct (unset)'],
  ['[env] HTTPS_PROXY is not used for http://', { HTTPS_PROXY: P }, 'http://api.example.com', 'direct (unset)'],
  ['[env] ALL_PROXY for https:// when its own is unset', { ALL_PROXY: P }, 'https://api.example.com', `${P} from ALL_PROXY`],
  ['[env] ALL_PROXY for http:// when its own is unset', { ALL_PROXY: P }, 'http://api.example.com', `${P} from ALL_PROXY`],
  ['[env] all_proxy before ALL_PROXY', { all_proxy: P, ALL_PROXY: Q }, 'http://api.example.com', `${P} from all_proxy`],
  ['[env] the scheme\'s own variable wins over ALL_PROXY', { HTTPS_PROXY: P, ALL_PROXY: Q }, 'https://api.example.com', `${P} from HTTPS_PROXY`],
  ['[env] http_proxy wins over ALL_PROXY for http://', { http_proxy: P, ALL_PROXY: Q }, 'http://api.example.com', `${P} from http_proxy`],
  ['[env] HTTP_PROXY does not hide ALL_PROXY', { HTTP_PROXY: P, ALL_PROXY: Q }, 'http://api.example.com', `${Q} from ALL_PROXY`],
  ['[code] an empty https_proxy is unset: HTTPS_PROXY is read', { https_proxy: '', HTTPS_PROXY: P }, 'https://api.example.com', `${P} from HTTPS_PROXY`],
  ['[code] an empty variable is no proxy', { HTTPS_PROXY: '' }, 'https://api.example.com', 'direct (unset)'],
  ['[code] an empty no_proxy is unset: NO_PROXY is read', { HTTPS_PROXY: P, no_proxy: '', NO_PROXY: 'example.com' }, 'https://api.example.com', 'direct by NO_PROXY'],
  ['[env] no_proxy before NO_PROXY', { HTTPS_PROXY: P, no_proxy: 'other.org', NO_PROXY: 'example.com' }, 'https://api.example.com', `${P} from HTTPS_PROXY`],
  ['[svc] loopback goes direct, whatever is set', { HTTPS_PROXY: P, http_proxy: P, ALL_PROXY: P }, 'https://127.0.0.1:8787', 'direct (loopback)'],
  ['[svc] localhost goes direct', { http_proxy: P }, 'http://localhost:8787', 'direct (loopback)'],
  ['[svc] ::1 goes direct', { http_proxy: P }, 'http://[::1]:8787', 'direct (loopback)'],
  ['[svc] 127.0.0.0/8 goes direct', { ALL_PROXY: P }, 'http://127.8.9.10', 'direct (loopback)'],
];

const proxyUrls: Row[] = [
  ['[-x] no scheme is http://', { HTTPS_PROXY: 'proxy.corp:3128' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[-x] no port is 1080', { HTTPS_PROXY: 'http://proxy.corp' }, 'https://api.example.com', 'http://proxy.corp:1080 from HTTPS_PROXY'],
  ['[-x] neither: http:// on 1080', { HTTPS_PROXY: 'proxy.corp' }, 'https://api.example.com', 'http://proxy.corp:1080 from HTTPS_PROXY'],
  ['[-x] an https:// proxy without a port is on 443', { HTTPS_PROXY: 'https://proxy.corp' }, 'https://api.example.com', 'https://proxy.corp:443 from HTTPS_PROXY'],
  ['[-x] port 80 written is port 80, not 1080', { HTTPS_PROXY: 'http://proxy.corp:80' }, 'https://api.example.com', 'http://proxy.corp:80 from HTTPS_PROXY'],
  ['[-x] a trailing slash is fine', { HTTPS_PROXY: 'http://proxy.corp:3128/' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[code] a path is ignored, as curl ignores it', { HTTPS_PROXY: 'http://proxy.corp:3128/squid' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[code] blanks around the value are ignored', { HTTPS_PROXY: '  http://proxy.corp:3128  ' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[svc] an unencoded @ in a password: the last @ ends the credentials (WHATWG URL)', { HTTPS_PROXY: 'http://me:p@ss@proxy.corp:3128' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[-x] an IPv6 proxy, bracketed', { HTTPS_PROXY: 'http://[fd00::3]:3128' }, 'https://api.example.com', 'http://[fd00::3]:3128 from HTTPS_PROXY'],
  ['[-x] credentials, percent-encoded, are kept out of the shown address', { HTTPS_PROXY: 'http://me:p%40ss%23word@proxy.corp:3128' }, 'https://api.example.com', 'http://proxy.corp:3128 from HTTPS_PROXY'],
  ['[svc] a password with an unencoded # is refused, naming the variable', { HTTPS_PROXY: 'http://user:p@ss#word@proxy.corp:3128' }, 'https://api.example.com', 'unusable HTTPS_PROXY'],
  ['[svc] a password with an unencoded / does not parse', { HTTPS_PROXY: 'http://user:pa/ss@proxy.corp:3128' }, 'https://api.example.com', 'unusable HTTPS_PROXY'],
  ['[svc] a password of digits, then an unencoded /, reads as a port and a path: refused', { HTTPS_PROXY: 'http://user:12/34@proxy.corp:3128' }, 'https://api.example.com', 'unusable HTTPS_PROXY'],
  ['[svc] a password with an unencoded ?', { HTTPS_PROXY: 'http://user:p?ss@proxy.corp:3128' }, 'https://api.example.com', 'unusable HTTPS_PROXY'],
  ['[svc] a password with a stray %', { HTTPS_PROXY: 'http://user:100%@proxy.corp:3128' }, 'https://api.example.com', 'unusable HTTPS_PROXY'],
  ['[svc] a socks proxy is not one svc speaks', { ALL_PROXY: 'socks5://proxy.corp:1080' }, 'https://api.example.com', 'unusable ALL_PROXY'],
  ['[svc] an unusable proxy the URL does not use is no matter', { http_proxy: 'http://u:p@ss#word@proxy.corp' }, 'https://api.example.com', 'direct (unset)'],
  ['[svc] nor one NO_PROXY sends around', { HTTPS_PROXY: 'http://u:p@ss#word@proxy.corp', NO_PROXY: 'example.com' }, 'https://api.example.com', 'direct by NO_PROXY'],
];

const noProxy: [source: string, list: string, host: string, direct: boolean][] = [
  ['[noproxy] * alone is every host', '*', 'api.example.com', true],
  ['[code] * alone, blanks around it', ' * ', 'api.example.com', true],
  ['[code] * in a list is no wildcard', '*,other.org', 'api.example.com', false],
  ['[noproxy] a name matches itself', 'ample.com', 'ample.com', true],
  ['[noproxy] a name matches the names under it', 'ample.com', 'www.ample.com', true],
  ['[noproxy] not a name that merely ends the same', 'ample.com', 'www.example.com', false],
  ['[noproxy] not a name it is the start of', 'ample.com', 'ample.com.org', false],
  ['[book] a leading dot matches the names under it', '.example.com', 'www.example.com', true],
  ['[code] a leading dot matches the name itself too', '.example.com', 'example.com', true],
  ['[book] a leading dot never matches another domain', '.example.com', 'nonexample.com', false],
  ['[code] deeper names match', 'example.com', 'a.b.api.example.com', true],
  ['[code] case does not matter', 'Example.COM', 'API.example.com', true],
  ['[code] a trailing dot on the entry is ignored', 'example.com.', 'api.example.com', true],
  ['[code] a trailing dot on the host is ignored', 'example.com', 'api.example.com.', true],
  ['[noproxy] a comma-separated list', 'other.org,example.com,third.net', 'api.example.com', true],
  ['[code] blanks around commas are ignored', ' other.org , example.com ', 'api.example.com', true],
  ['[code] empty entries are ignored', ',,other.org,,example.com,', 'api.example.com', true],
  ['[code] a blank not followed by a comma ends the list', 'other.org example.com', 'api.example.com', false],
  ['[code] an entry with a port matches nothing (curl compares names only)', 'example.com:443', 'example.com', false],
  ['[noproxy] an IPv4 address', '10.1.2.3', '10.1.2.3', true],
  ['[noproxy] another IPv4 address', '10.1.2.3', '10.1.2.4', false],
  ['[noproxy][book] an IPv4 CIDR range', '10.0.0.0/8', '10.200.3.4', true],
  ['[noproxy] outside the range', '10.0.0.0/8', '11.0.0.1', false],
  ['[noproxy] 192.168.0.0/16', '192.168.0.0/16', '192.168.77.1', true],
  ['[code] /32 is the address alone', '10.1.2.3/32', '10.1.2.3', true],
  ['[code] /0 is the address alone, as curl reads it', '10.0.0.0/0', '10.1.2.3', false],
  ['[code] a prefix longer than the address matches nothing', '10.0.0.0/33', '10.1.2.3', false],
  ['[code] no name is looked up: a name entry never matches an IP host', 'example.com', '93.184.216.34', false],
  ['[code] nor an IP entry a host name', '10.0.0.0/8', 'api.example.com', false],
  ['[noproxy] an IPv6 address, without brackets', 'fd00::1', '[fd00::1]', true],
  ['[noproxy] an IPv6 CIDR range', 'fd00::/8', '[fd12:3456::1]', true],
  ['[noproxy] outside the IPv6 range', 'fd00::/8', '[fe80::1]', false],
  ['[svc] an IPv6 range not on a byte boundary', 'fc00::/7', '[fd00::1]', true],
  ['[svc] an IPv6 address, bracketed (curl takes it without)', '[fd00::1]', '[fd00::1]', true],
  ['[code] an IPv4 entry never matches an IPv6 host', '10.0.0.0/8', '[fd00::1]', false],
  ['[code] the IPv6 address written another way', 'fd00:0:0:0:0:0:0:1', '[fd00::1]', true],
];

describe('which proxy a URL goes through (curl: libcurl-env(3))', () => {
  it.each(which)('%s', (_source, env, url, expected) => expect(decide(env, url)).toBe(expected));
});

describe('a proxy variable\'s value (curl: -x/--proxy)', () => {
  it.each(proxyUrls)('%s', (_source, env, url, expected) => expect(decide(env, url)).toBe(expected));

  it.each(['http://jqv:Zq@x#9k@proxy:3128', 'http://jqv:Zq/x9k@proxy:3128', 'http://jqv:Zq9k%@proxy:3128', 'socks5://jqv:Zq9k@proxy:1080'])(
    'says what is wrong with %s without repeating its password',
    (value) => {
      const parsed = parseProxyUrl(value);
      expect('problem' in parsed).toBe(true);
      const problem = 'problem' in parsed ? parsed.problem : '';
      expect(problem).not.toMatch(/Zq|9k|jqv/);
    },
  );
});

describe('NO_PROXY (curl: CURLOPT_NOPROXY(3), 7.86+)', () => {
  it.each(noProxy)('%s: %j against %s', (_source, list, host, direct) => {
    const env = { HTTPS_PROXY: P, NO_PROXY: list };
    expect(decide(env, `https://${host}/`)).toBe(direct ? 'direct by NO_PROXY' : `${P} from HTTPS_PROXY`);
  });
});

describe('what --verbose says of the decision', () => {
  const says = (env: Record<string, string>, url: string) => {
    const settings = proxySettings(env);
    return describeChoice(chooseProxy(settings, new URL(url)), settings, new URL(url).origin);
  };

  it('names the proxy and the variable it came from, never the credentials', () => {
    const line = says({ HTTPS_PROXY: 'http://me:s3cret@proxy.corp:3128' }, 'https://api.example.com');
    expect(line).toBe('* https://api.example.com: through the proxy http://proxy.corp:3128 (from HTTPS_PROXY)');
  });

  it('says HTTP_PROXY is not read, where it was set and the request went direct', () => {
    expect(says({ HTTP_PROXY: P }, 'https://api.example.com')).toContain('HTTP_PROXY is not read');
    expect(says({ HTTP_PROXY: P }, 'http://api.example.com')).toContain('HTTP_PROXY is not read');
  });

  it('names the NO_PROXY variable that sent a host direct', () => {
    expect(says({ HTTPS_PROXY: P, no_proxy: 'example.com' }, 'https://api.example.com')).toBe('* https://api.example.com: direct, as no_proxy names it');
  });
});
