/**
 * Rules about keys that operations and views share: checking an id,
 * telling a missing key, whether a key is the one in use, and a
 * replacement's expiry. Pure: no I/O.
 */
import { ApiError } from '../../client/errors.js';
import { keyStatus, type KeyView } from '../../client/key-view.js';
import { apiPaths } from '../../contract/paths.js';
import { asciiDecoded, keyHint, keyIn } from '../../contract/key-format.js';
import { CliError, ExitCode, UsageError } from '../errors/errors.js';
import { clip, shellWord } from '../text/text.js';
import { nearest } from './suggest.js';

/**
 * A 404 that says a key is not there: the service's (in JSON), or any 404
 * to a request naming one key (`/user/api-keys/{id}`), which a framework
 * answers with its own page for an id it does not know. Elsewhere an HTML
 * 404 page is no answer from the service at all.
 */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && (error.foreignBody === null || error.path.startsWith(`${apiPaths.keys}/`));
}

export function keyNotFound(ids: string): CliError {
  return new CliError(
    `No key with id or name ${clip(ids, 200)}: it never existed, belongs to another user, or was already revoked.`,
    ExitCode.notFound,
  );
}

/** A key svc can address: one with an id. */
export type NamedKey = KeyView & { id: string };

/** Keys whose id or name `id` most likely misspells; none when too many are as near to mean anything. */
const MOST_SUGGESTED = 3;

/**
 * The failure for ids the server answered 404 (exit 4), each with the keys
 * it most likely meant among `keys` (null: none could be read): a near miss
 * (a typo in an id or a name) gets the nearest keys and the command to run
 * (`svc keys <command> <id>`).
 */
export function notFoundAmong(ids: readonly string[], keys: readonly KeyView[] | null, command: string): CliError {
  if (keys === null) return keyNotFound(ids.join(', '));
  const named = keys.filter((k): k is NamedKey => k.id !== null);
  const byId = new Map(named.map((k) => [k.id, k]));
  const lines = ids.map((id) => {
    if (byId.has(id)) return `The server answered 404 to ${clip(id, 200)}, though its key list shows that key: svc cannot say whether it is there.`;
    const near = nearest(id, named.map((k) => (k.name === null ? [k.id] : [k.id, k.name])));
    if (near.length === 0 || near.length > MOST_SUGGESTED) return keyNotFound(id).lines[0]!;
    const meant = near.map((found) => `${clip(found, 200)}${byId.get(found)?.name ? ` ('${clip(byId.get(found)!.name!, 200)}')` : ''}`);
    // A revoke cannot be undone, and the key named may be one the person just revoked under another name's
    // key: a revoke's near miss is offered to look at, never as a revoke of another key to paste.
    const next = command === 'revoke' ? 'view' : command;
    return `${keyNotFound(id).lines[0]!.replace(/\.$/, '')}. Did you mean ${meant.join(' or ')} (\`svc keys ${next} ${shellWord(near[0]!)}\`)?`;
  });
  return new CliError(lines, ExitCode.notFound);
}

/** Arguments not read as names because the list could not be read whole (`incomplete` says why): a name one key read has may be another's on a page svc could not read. */
export function unreadNames(incomplete: string, args: readonly string[]): string[] {
  return [
    `svc could not read the whole key list (${incomplete}), so it acts on no key by name: ${args.map((arg) => `'${clip(arg, 200)}'`).join(', ')} may name a key it did not see.`,
    'Give the id instead (`svc keys list` shows the keys it can read).',
  ];
}

/** Half of a UTF-16 surrogate pair: UTF-8 has no bytes for it, so no URL can carry it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Ids are opaque (docs/contract.md §C6): any server may shape them its own
 * way. Only what no URL can carry as one path segment is out: an empty id
 * would address the whole collection, URL parsers resolve `.` and `..`
 * (even percent-encoded) to another path, and a lone surrogate has no
 * encoding at all.
 */
export function isAddressable(id: string): boolean {
  return id.trim() !== '' && id !== '.' && id !== '..' && !LONE_SURROGATE.test(id);
}

export function checkKeyId(id: string): string {
  refuseKey(id, 'a key id');
  if (!isAddressable(id)) {
    throw new UsageError(`'${clip(id, 200)}' cannot name a key: no URL can carry it as a path segment (see \`svc keys list\`).`);
  }
  return id;
}

/** A key where a name goes would be kept by the server as the name and shown in every listing. */
export function checkKeyName(name: string): string {
  refuseKey(name, 'a name');
  return name;
}

/** For a prompt that asks a new key's name. */
export function validateKeyName(value: string): true | string {
  if (!value.trim()) return 'A name is required.';
  const key = keyWithin(value);
  return key === null ? true : notAKey(key, 'a name');
}

/**
 * A key given where an id, a name or a path goes is refused before any
 * request: it would travel in a URL or a body, land in the server's and
 * proxies' logs, and be printed back in messages. Only its hint is shown.
 */
export function refuseKey(value: string, what: string): void {
  const key = keyWithin(value);
  if (key !== null) throw new UsageError(notAKey(key, what));
}

/** Percent-escapes too: a URL carries `sk%5F…` to a server that reads it as `sk_…`. */
function keyWithin(value: string): string | null {
  return keyIn(value) ?? keyIn(asciiDecoded(value));
}

function notAKey(key: string, what: string): string {
  return `${keyHint(key)}: that is an API key, not ${what}; svc sends a key only as the Authorization header.`;
}

/** What a key argument names, read against the whole key list. */
export type KeyArgument =
  | { kind: 'id'; id: string }
  | { kind: 'name'; key: KeyView & { id: string } }
  | { kind: 'ambiguous'; keys: (KeyView & { id: string })[] }
  | { kind: 'unknown' };

/**
 * An argument (already trimmed) that is a key's id names that key, whatever
 * any name says; else one that is exactly the trimmed name of one key names
 * that key; the name of several names none of them (the caller lists
 * them); anything else is left to the server's 404.
 */
export function resolveKeyArgument(keys: readonly KeyView[], arg: string): KeyArgument {
  if (keys.some((k) => k.id === arg)) return { kind: 'id', id: arg };
  const named = namedExactly(keys, arg);
  if (named.length === 1) return { kind: 'name', key: named[0]! };
  if (named.length > 1) return { kind: 'ambiguous', keys: named };
  return { kind: 'unknown' };
}

/** The keys svc can act on whose name, trimmed, is exactly `name`: what a name names, wherever one is given. */
export function namedExactly(keys: readonly KeyView[], name: string): (KeyView & { id: string })[] {
  return keys.filter((k): k is KeyView & { id: string } => k.id !== null && isAddressable(k.id) && k.name?.trim() === name);
}

/**
 * A name that several keys share names none of them (exit 2): each is
 * listed, aligned, with what tells them apart (id, state, when created),
 * so that the person can give the id they mean.
 */
function sharedName(name: string, keys: readonly (KeyView & { id: string })[], nowMs: number): string[] {
  const created = (ms: number | null) => (ms === null ? '-' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  const rows = keys.map((k) => [clip(k.id, 200), clip(k.name ?? '-', 40), keyStatus(k, nowMs) ?? '-', `created ${created(k.createdAt)}`]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return [
    `'${clip(name, 200)}' is the name of ${keys.length} keys, so it names none of them: give the id of the one you mean.`,
    ...rows.map((row) => `  ${row.map((cell, column) => cell + ' '.repeat(widths[column]! - [...cell].length)).join('  ').trimEnd()}`),
  ];
}

/**
 * What is left of arguments that named no key to act on, the one refusal
 * of every command that takes a key by name (view, enable, disable,
 * rotate, revoke by argument or by --name): each name several keys share,
 * listed as sharedName lists it (exit 2, as a usage error: the person must
 * choose), with, for revoke, the way to mean every one; then `notFound`,
 * the lines of what named nothing (exit 4 when they are all there is).
 */
export function refuseNames(shared: readonly (readonly [name: string, keys: readonly NamedKey[]])[], notFound: readonly string[], nowMs: number, command: string): CliError {
  const lines = shared.flatMap(([name, keys]) => [
    ...sharedName(name, keys, nowMs),
    ...(command === 'revoke' ? [`Or revoke every one: svc keys revoke --name ${shellWord(name)} --all`] : []),
  ]);
  return new CliError([...lines, ...notFound], lines.length > 0 ? ExitCode.usage : ExitCode.notFound);
}

/** Disabled, expired or revoked by any field the record has: such a key answered no request at `nowMs`. */
function cannotAuthenticate(key: KeyView, nowMs: number): boolean {
  if (key.enabled === false || (key.expiresAt !== null && key.expiresAt <= nowMs)) return true;
  return ['disabled', 'expired', 'revoked'].includes(keyStatus(key, nowMs)?.toLowerCase() ?? '');
}

/** A hint as svc writes one (docs/contract.md §A4): `sk_`, four characters, `…`, the last four. */
const OWN_HINT = /^sk_[A-Za-z0-9]{4}\u2026[A-Za-z0-9]{4}$/;

/** Where a record was read: a list the key in use read at `atMs` (on the server's clock), and whether any key of it has that key's hint. */
export interface Listed {
  atMs: number;
  showsInUse: boolean;
}

/** `keys`, read at `atMs` by the key whose hint is `inUse`, as isKeyInUse weighs each of them: looked through once, not once a key. */
export function listedFor(keys: readonly KeyView[], atMs: number, inUse: string | undefined): Listed {
  return { atMs, showsInUse: inUse !== undefined && keys.some((k) => k.hint === inUse) };
}

/**
 * Whether this is the key svc is using: true, false, or null for "cannot
 * tell". Its hint is the key's: yes, whatever else the record says. Only a
 * hint written as svc writes them, and different, says no: a hint in
 * another form (`sk_MiOs...EgLk`, `****EgLk`) may be the same key written
 * otherwise, so it is null, never a no that lets a key be revoked.
 * `listed`: the record came in a list the key in use read. That key is in
 * it, so a list where no hint is the key's own writes its hints some other
 * way (lower case, other characters) and none says no; and a key the list
 * shows disabled or expired, hint or none, cannot be the one that read it.
 */
export function isKeyInUse(key: KeyView, inUse: string | undefined, listed?: Listed): boolean | null {
  if (inUse !== undefined && key.hint === inUse) return true;
  if (listed !== undefined && cannotAuthenticate(key, listed.atMs)) return false;
  if (inUse === undefined || key.hint === null) return null;
  if (listed !== undefined && !listed.showsInUse) return null;
  return OWN_HINT.test(key.hint) ? false : null;
}

/**
 * The old key's expiry carries over; an already expired key gets its
 * original lifetime again from `nowMs` (the server's clock), written by
 * `mark` (the client's, client/marks.ts). `unknown` when the record does not
 * say enough to tell.
 */
export function replacementExpiry(old: KeyView, nowMs: number, mark: (atMs: number) => string): { expiresAt: string | null; unknown: boolean } {
  if (!old.expiresKnown) return { expiresAt: null, unknown: true };
  if (old.expiresAt === null) return { expiresAt: null, unknown: false };
  if (old.expiresAt > nowMs) return { expiresAt: new Date(old.expiresAt).toISOString(), unknown: false };
  if (old.createdAt === null || old.createdAt >= old.expiresAt) return { expiresAt: null, unknown: true };
  return { expiresAt: mark(nowMs + (old.expiresAt - old.createdAt)), unknown: false };
}
