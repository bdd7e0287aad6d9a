/**
 * Every environment variable svc reads, each with what it does: the man
 * page's ENVIRONMENT section is generated from this list (scripts/man-page.ts)
 * and README's table must match it, so a variable the code reads cannot go
 * undocumented. Code reads the environment through readEnv, whose `name`
 * takes only these names; test/docs/environment.test.ts catches a direct
 * read of any other (bin/svc.js, which is outside the bundle, included).
 * Descriptions are help-text syntax: `code` is set in bold in the man page.
 *
 * Imported on every command's path, so it is data only, with no imports;
 * `svc help environment` prints the list (src/cli/docs/environment-help.ts).
 */
export const ENVIRONMENT = [
  {
    names: ['SVC_API_KEY'],
    description: "the key to use; wins over the profile's saved key; trimmed, and a usage error (value never shown) if it is not a key",
  },
  {
    names: ['SVC_BASE_URL'],
    description: 'the service address (after `--base-url`, before the profile; default `http://127.0.0.1:8787`); an absolute http(s) URL',
  },
  {
    names: ['SVC_ALLOW_HTTP'],
    description: '`1`: allow sending a key over plain http to a host other than this machine (refused otherwise, exit 2)',
  },
  {
    names: ['HTTPS_PROXY', 'http_proxy', 'ALL_PROXY', 'NO_PROXY'],
    // curl reads the lower-case names first, and so does svc; HTTP_PROXY is read only for `--verbose` to say it is not used.
    alsoRead: ['https_proxy', 'all_proxy', 'no_proxy', 'HTTP_PROXY'],
    description:
      "proxies, as curl reads them: `HTTPS_PROXY` (or `https_proxy`) for https://; `http_proxy`, lower case only, for http:// (curl never reads `HTTP_PROXY`, nor does svc); `ALL_PROXY` (or `all_proxy`) for either when its own is unset. A proxy URL without a scheme is http://, and without a port on 1080 (443 for an https:// proxy), as in curl. `NO_PROXY` (or `no_proxy`): `*`, or a comma-separated list of host names (each with the names under it, leading dot or not), IP addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`), without ports. Loopback always goes direct; `--verbose` says which proxy each address goes through, and why",
  },
  {
    // Read by Node itself, as it starts; listed because svc's error for an unknown CA names it.
    names: ['NODE_EXTRA_CA_CERTS'],
    description:
      'extra CA certificates (PEM) to trust: a server with a private or self-signed CA fails at once, naming this variable, until it is set',
  },
  {
    names: ['PATH'],
    description: 'where `svc run` looks for its command (it is given the same PATH), before any key is made for it',
  },
  {
    names: ['SVC_PROFILE'],
    description:
      "the profile (after `--profile`; else a project's `.svc-profile`, else the default profile, `default` unless `svc profile use` chose another)",
  },
  {
    names: ['SVC_CONFIG_DIR'],
    description: 'where the config store lives (default `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`)',
  },
  {
    names: ['XDG_CONFIG_HOME'],
    description: 'the config store is in `$XDG_CONFIG_HOME/svc` when `SVC_CONFIG_DIR` is unset',
  },
  {
    names: ['SVC_LOCAL_ADMIN_TOKEN'],
    description: "the reference server's admin token (else `--admin-token`, else random)",
  },
  { names: ['NO_COLOR'], description: 'set and non-empty: no colour, even on a terminal, whatever `FORCE_COLOR` says' },
  {
    names: ['FORCE_COLOR'],
    description: 'as chalk reads it: `1`, `2` or `3` (or empty, or `true`) colour messages and tables even when piped; `0` or `false` never colour, even on a terminal',
  },
  {
    names: ['SVC_EXPIRY_WARNING_DAYS'],
    description: 'warn when the key in use expires within this many days (default 7; `0` never)',
  },
  {
    names: ['SVC_EPHEMERAL_KEY_ID'],
    description:
      "set by `svc run --ephemeral` for its command: the id of the key made for it, revoked when the command ends; an svc inside the command does not advise rotating that key",
  },
  {
    names: ['NODE_COMPILE_CACHE', 'NODE_DISABLE_COMPILE_CACHE'],
    description:
      "where V8's compiled code of svc is kept (`bin/load-bundle.js`): `$XDG_CACHE_HOME/svc/compile-cache`, else `~/.cache/svc/compile-cache`; the first moves it, `=1` on the second turns it off. Each command's first successful run keeps the code it ran there (0.3 to 0.6 MB a command, at most 16 commands per svc version and Node version, none for a request for help); a cache not used for 30 days goes. None is made where the directory holding the cache home (the home, for `~/.cache`) does not exist",
  },
  {
    names: ['NODE_OPTIONS'],
    description: "Node's own; code compiled under one set of flags (this and node's command line) is cached apart from another's, since V8 refuses it under others",
  },
  {
    names: ['XDG_CACHE_HOME'],
    description: 'the compile cache is in `$XDG_CACHE_HOME/svc/compile-cache` when `NODE_COMPILE_CACHE` is unset; ignored unless an absolute path',
  },
  {
    names: ['DBUS_SESSION_BUS_ADDRESS'],
    description:
      'Linux: the D-Bus session bus on which a profile kept in the keyring (`svc login --keyring`) finds the Secret Service; unset or unreachable, such a profile fails with exit 3 (never read for other profiles)',
  },
  {
    names: ['CI'],
    description:
      'set and non-empty: never prompt; a missing answer is a usage error; a failed `--to-file` or `--to-command` delivery revokes the new key instead of printing its secret',
  },
  {
    names: ['GITHUB_ACTIONS'],
    description:
      "`true` (as the GitHub Actions runner sets it): every secret svc hands on (a new key printed, `--to-file`, `--to-command`, `svc run`'s key, an `svc api` answer holding one) is first registered with the runner's log masking, `::add-mask::` on stderr; never printed otherwise",
  },
  {
    // npm sets it for what it runs; svc reads only whether it is set.
    names: ['npm_lifecycle_event'],
    description:
      'set by npm for what it runs (`npx`, `npm run`, `npm exec`): `svc serve` then stops, as on SIGTERM, once the npm process that started it is gone, since npm does not pass SIGTERM on',
  },
] as const satisfies readonly { names: readonly string[]; alsoRead?: readonly string[]; description: string }[];

type Entry = (typeof ENVIRONMENT)[number];

/** A variable svc may read: one that ENVIRONMENT lists. */
export type EnvName = Entry['names'][number] | Extract<Entry, { alsoRead: unknown }>['alsoRead'][number];

export function readEnv(env: NodeJS.ProcessEnv, name: EnvName): string | undefined {
  return env[name];
}
