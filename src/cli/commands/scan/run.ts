import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ApiClient } from '../../../client/api.js';
import { hintKeys, keyHint } from '../../../contract/key-format.js';
import { DEFAULT_BASE_URL } from '../../../contract/paths.js';
import { confirmRevokeFound } from '../../dialogs/key-changes.js';
import { fingerprint } from '../../domain/find-keys.js';
import { CliError, ExitCode, UsageError } from '../../errors/errors.js';
import { KeysFoundError } from '../../errors/scan.js';
import { endFoundKeys, profileWorkspace, revokedBy, type Ended } from '../../operations/end-found-keys.js';
import { verifyFoundKeys, type Verdict, type VerifyMode } from '../../operations/verify-found.js';
import { sameServer } from '../../session/endpoint.js';
import { withKey, type ProfileSession } from '../../session/session.js';
import { repositoryRoot, scanHistory } from '../../sources/git.js';
import { addToIgnoreFile, emptyIgnoreList, IGNORE_FILE, readIgnoreFile } from '../../sources/ignore-file.js';
import { emptyTally, type Finding, type Tally } from '../../sources/places.js';
import { scanIndex } from '../../sources/staged.js';
import { scanStream } from '../../sources/stream.js';
import { scanTree } from '../../sources/tree.js';
import { workingDirectory } from '../../terminal/io.js';
import { sarifLog } from '../../views/sarif.js';
import { revocation, revokeFailure, scanColumns, scanDocument, scannedLine, scanRows, stillLive, summaryCounts, verdictLine, where, type ReportedKey, type ScanReport } from '../../views/scan.js';

export interface ScanOptions {
  git?: boolean;
  staged?: boolean;
  /** 'key' (the default), 'own', or false for --no-verify. */
  verify: string | false;
  revoke?: boolean;
  yes?: boolean;
  format?: string;
  maxFileSize: number;
  ignoreFile?: string;
  baseline?: boolean;
}

type Target = ScanReport['target'];

interface Found {
  key: string;
  places: Finding[];
}

/** docs/contract.md §C11. */
export async function run(session: ProfileSession, paths: string[], opts: ScanOptions): Promise<void> {
  const { render, io, options } = session;
  const format = opts.format ?? (options.json ? 'json' : 'table');
  if (options.json && opts.format !== undefined && opts.format !== 'json') throw new UsageError('Give --json or --format, not both.');
  const target: Target = opts.git ? 'git' : opts.staged ? 'index' : paths.length === 1 && paths[0] === '-' ? 'stdin' : 'files';
  if (opts.git && opts.staged) throw new UsageError('Give --git or --staged, not both.');
  if (target !== 'files' && target !== 'stdin' && paths.length > 1) throw new UsageError(`--${opts.git ? 'git' : 'staged'} scans one repository: svc scan --${opts.git ? 'git' : 'staged'} [REPO]`);
  if (target === 'files' && paths.includes('-')) throw new UsageError('- (standard input) is scanned alone: svc scan -');
  const mode: VerifyMode = opts.verify === false ? 'none' : (opts.verify as VerifyMode);
  if (opts.revoke) {
    if (opts.baseline) throw new UsageError('Give --revoke or --baseline, not both.');
    if (mode !== 'key') throw new UsageError('--revoke revokes only keys seen working with their own secret: leave out --no-verify and --verify own.');
    if (!opts.yes && !session.canPrompt) throw new UsageError('Refusing to revoke without confirmation: pass --yes (or run on a terminal to be asked).');
  }
  if (opts.yes && !opts.revoke) throw new UsageError('--yes is about --revoke: svc scan --revoke --yes');

  const cwd = io.cwd ?? workingDirectory() ?? '/';
  const ignore = emptyIgnoreList();
  const fingerprints = new Map<string, string>();
  const fingerprintOf = (key: string) => fingerprints.get(key) ?? fingerprints.set(key, fingerprint(key)).get(key)!;
  const found = new Map<string, Found>();
  const ignored = { byFile: 0, byMarker: 0 };
  const onFinding = (given: Finding) => {
    // A key in a file's name is shown by its hint as any other: in every report, the ignore file's comments included.
    const finding = 'path' in given.place ? { ...given, place: { ...given.place, path: hintKeys(given.place.path) } } : given;
    if (finding.marked) ignored.byMarker++;
    else if (ignore.fingerprints.has(fingerprintOf(finding.key))) ignored.byFile++;
    else {
      const entry = found.get(finding.key) ?? { key: finding.key, places: [] };
      entry.places.push(finding);
      found.set(finding.key, entry);
    }
  };

  // The ignore file is read before the scan, from the root of what is scanned (or --ignore-file), and the baseline written there.
  let ignorePath: string;
  let tally: Tally;
  if (target === 'git' || target === 'index') {
    const repo = resolve(cwd, paths[0] ?? '.');
    const root = await repositoryRoot(repo);
    if (root.shallow && target === 'git') render.warn('This clone is shallow: the history before its first commit is not here, and is not scanned (git fetch --unshallow; in GitHub Actions, actions/checkout with fetch-depth: 0).');
    ignorePath = opts.ignoreFile === undefined ? resolve(root.top, IGNORE_FILE) : resolve(cwd, opts.ignoreFile);
    await readIgnore(ignorePath, opts.ignoreFile !== undefined, ignore);
    tally = target === 'git' ? await scanHistory(repo, { maxFileSize: opts.maxFileSize }, onFinding) : await scanIndex(repo, onFinding);
  } else if (target === 'stdin') {
    ignorePath = resolve(cwd, opts.ignoreFile ?? IGNORE_FILE);
    await readIgnore(ignorePath, opts.ignoreFile !== undefined, ignore);
    tally = emptyTally();
    tally.read = 1;
    tally.bytes = await scanStream(io.stdin as AsyncIterable<Buffer>, (f) =>
      onFinding({ key: f.key, place: { source: 'stdin', line: f.line, column: f.column }, length: f.length, escaped: f.escaped, marked: f.marked, context: f.context }),
    );
  } else {
    const given = paths.length === 0 ? ['.'] : paths;
    // The root of a directory scanned is that directory; of a file, the directory svc runs in.
    const roots = [...new Set(given.map((path) => (isDirectory(resolve(cwd, path)) ? resolve(cwd, path, IGNORE_FILE) : resolve(cwd, IGNORE_FILE))))];
    ignorePath = opts.ignoreFile === undefined ? roots[0]! : resolve(cwd, opts.ignoreFile);
    if (opts.ignoreFile !== undefined) await readIgnore(ignorePath, true, ignore);
    else for (const root of roots) await readIgnore(root, false, ignore);
    tally = emptyTally();
    for (const path of given) {
      try {
        await scanTree(path, resolve(cwd, path), { maxFileSize: opts.maxFileSize }, onFinding, tally);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') throw new UsageError(`No such file or directory: ${path}`);
        if (code === 'EACCES' || code === 'EPERM') throw new CliError(`Cannot read ${path}: permission denied.`);
        throw error;
      }
    }
  }
  for (const line of [...ignore.withKeys.map((at) => `${at} holds a key itself: an ignore file holds fingerprints (svc scan --baseline writes them); that line is not read.`),
    ...ignore.unread.map((at) => `${at} is not a fingerprint; that line is not read.`)]) render.warn(line);

  if (opts.baseline) {
    const entries = [...found.values()].map((f) => ({ fingerprint: fingerprintOf(f.key), hint: keyHint(f.key), where: where(f.places[0]!.place) }));
    const added = await addToIgnoreFile(ignorePath, entries);
    render.success(`${found.size === 0 ? 'No key found' : `Found ${found.size} ${found.size === 1 ? 'key' : 'keys'}`}; added ${added} ${added === 1 ? 'fingerprint' : 'fingerprints'} to ${ignorePath}. Later scans do not report ${found.size === 1 ? 'it' : 'them'}.`);
    if (found.size > 0) render.warn('--baseline checks nothing: a key it now leaves out that still works is still a leak, here and wherever else it is. Run svc scan without --baseline first to see which are live.');
    return;
  }

  const keys = [...found.keys()];
  const verification = await verify(session, keys, mode);
  const report = (ended: Map<string, Ended>): ScanReport => ({
    target,
    keys: [...found.values()].map((f): ReportedKey => {
      const end = ended.get(f.key);
      return {
        hint: keyHint(f.key),
        fingerprint: fingerprintOf(f.key),
        places: f.places.map(({ key: _secret, ...place }) => place),
        verdict: verification.verdicts.get(f.key)!,
        ended: end === undefined ? null : { result: end.result, by: end.by, refused: end.refused },
      };
    }),
    tally,
    ignored,
    ignoreFiles: ignore.files,
    server: mode === 'none' ? null : session.endpoint.url,
  });

  let ended = new Map<string, Ended>();
  const toEnd = keys.flatMap((key) => {
    const verdict = verification.verdicts.get(key)!;
    if (verdict.state !== 'live' || !verdict.owner?.record.id) return [];
    const { record, profile } = verdict.owner;
    return [{ key, id: record.id!, name: record.name, workspaceId: record.workspaceId, inProfileList: profile === session.profileName }];
  });
  const asking = opts.revoke === true && !opts.yes && toEnd.length > 0;
  if (asking && format === 'table') show(session, report(ended));
  if (opts.revoke && toEnd.length > 0) {
    const profileWorkspaceId = profileWorkspace(verification.own, session.profileName);
    if (asking) await confirmRevokeFound(session, toEnd.map((k) => ({ id: k.id, name: k.name, workspaceId: k.workspaceId, by: revokedBy(k, profileWorkspaceId, verification.profileClient !== null) })));
    const results = await endFoundKeys(
      {
        onSignal: session.deps.onSignal,
        now: session.deps.now,
        sleep: session.deps.sleep,
        profile: verification.profileClient === null ? null : { client: verification.profileClient, workspaceId: profileWorkspaceId },
        connect: verification.connect,
      },
      toEnd,
    );
    ended = new Map(results.map((r) => [r.key, r]));
  }
  const final = report(ended);
  if (format === 'json') render.json(scanDocument(final));
  else if (format === 'sarif') render.json(sarifLog(final, SVC_VERSION));
  else if (!asking) show(session, final);
  for (const key of final.keys) tellEnded(session, key);
  conclude(session, final, verification.notes, opts, format);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function readIgnore(path: string, required: boolean, list: ReturnType<typeof emptyIgnoreList>): Promise<void> {
  try {
    await readIgnoreFile(path, list, required);
  } catch (error) {
    if (error instanceof CliError) throw new UsageError(error.lines);
    throw error;
  }
}

/** The table on stdout and what was scanned on stderr. */
function show(session: ProfileSession, report: ScanReport): void {
  const { render, io } = session;
  const rows = scanRows(report);
  if (rows.length > 0 || !io.stdoutIsTTY) render.table(scanColumns(), rows);
  render.info(scannedLine(report));
}

function tellEnded(session: ProfileSession, key: ReportedKey): void {
  const { render } = session;
  const how = revocation(key);
  if (how === null) return;
  const { result, refused } = key.ended!;
  if (how === 'failed' || how === 'not-tried') {
    render.warn(`${key.hint} was not revoked: ${revokeFailure(key)}.`);
    return;
  }
  const what = `${how === 'this-run' ? 'Revoked' : 'Already revoked (by another revoke):'} ${(result as { id: string }).id} (${key.hint})`;
  if (refused === true) render.success(`${what}; its secret is now refused.`);
  else if (refused === false) render.warn(`${what}, but its secret still answered after 5 s: check again with SVC_API_KEY=… svc keys ping.`);
  else render.success(`${what}; svc could not try its secret again to see it refused.`);
}

/** The summary, the advice true to each state, and the exit code (docs/contract.md §C5). */
function conclude(session: ProfileSession, report: ScanReport, notes: readonly string[], opts: ScanOptions, format: string): void {
  const { render } = session;
  for (const note of notes) render.warn(note);
  const counts = summaryCounts(report);
  // The table's own run said it beside the table.
  if (format !== 'table') render.info(scannedLine(report));
  const unread = report.tally.unreadableCount;
  if (counts.keys === 0) {
    // No key found in what was read is no answer for what was not.
    if (unread > 0) throw new CliError(`No key found, but ${unread === 1 ? '1 file or directory' : `${unread} files or directories`} could not be read: the scan did not finish (exit 6).`, ExitCode.unfinished);
    render.success('No key found.');
    return;
  }
  if (unread > 0) render.warn(`${unread === 1 ? '1 file or directory' : `${unread} files or directories`} could not be read: keys in them are not in this report.`);
  const live = report.keys.filter(stillLive);
  const lines = [verdictLine(counts)];
  if (counts.revoked > 0) lines.push('Whatever used a revoked key needs a new one: svc keys create NAME, and put it where the old one was.');
  if (live.length > 0) {
    const named = live.flatMap((k) => (k.verdict.state === 'live' && k.verdict.owner?.record.id ? [k.verdict.owner] : []));
    // Rotation is for a key of the profile's own account: another account's key is its owner's to replace.
    const yours = named.find((owner) => owner.profile === session.profileName)?.record.id;
    if (!opts.revoke) lines.push(`To end ${live.length === 1 ? 'it' : 'them'}, run this scan again with --revoke${yours ? `; to give a service a new key first: svc keys rotate ${yours}` : ''}.`);
    if (named.length < live.length) lines.push(`${live.length - named.length} live ${live.length - named.length === 1 ? 'key is' : 'keys are'} no key svc can name in any list it can read: svc leaves ${live.length - named.length === 1 ? 'it' : 'them'} to the owner.`);
    throw new KeysFoundError(lines, ExitCode.failure);
  }
  if (counts.notChecked > 0) throw new KeysFoundError([...lines, 'A key not checked may still work: a commit or a log that holds one is a leak whatever its state.'], ExitCode.scanKeysNotChecked);
  throw new KeysFoundError(lines, ExitCode.scanKeysNotLive);
}

interface Verified {
  verdicts: Map<string, Verdict>;
  own: Awaited<ReturnType<typeof verifyFoundKeys>>['own'];
  notes: string[];
  profileClient: ApiClient | null;
  connect: (apiKey: string) => Promise<ApiClient>;
}

/**
 * The clients verification uses: the profile's key and those of the
 * user's other profiles saved for the same server (in the config file:
 * the keyring is not opened for them), and one client the found keys
 * share, so that 500 of them use one connection pool, not 500.
 */
async function verify(session: ProfileSession, keys: readonly string[], mode: VerifyMode): Promise<Verified> {
  const notes: string[] = [];
  let foundClient: ApiClient | null = null;
  const connect = async (apiKey: string) => {
    foundClient ??= (await withKey(session, { apiKey, source: 'login' })).client;
    return foundClient.withApiKey(apiKey);
  };
  if (mode === 'none' || keys.length === 0) {
    const { verdicts } = await verifyFoundKeys({ own: [], connect }, keys, 'none');
    return { verdicts, own: [], notes, profileClient: null, connect };
  }
  const own: { profile: string; client: ApiClient }[] = [];
  let profileClient: ApiClient | null = null;
  if (session.credentials) {
    profileClient = (await withKey(session, session.credentials)).client;
    own.push({ profile: session.profileName, client: profileClient });
  } else notes.push(`Profile '${session.profileName}' has no key: svc could not read your key list to check found keys by their hints${session.keyFailure ? ` (${session.keyFailure.message})` : ''}.`);
  for (const name of session.config.profileNames()) {
    const profile = session.config.getProfile(name);
    if (name === session.profileName || !profile.apiKey || !sameServer(profile.baseUrl ?? DEFAULT_BASE_URL, session.endpoint.url)) continue;
    if (own.some((o) => o.client.keyHint === keyHint(profile.apiKey!))) continue;
    own.push({ profile: name, client: (await withKey(session, { apiKey: profile.apiKey, source: 'profile' })).client });
  }
  const { render } = session;
  const result = await verifyFoundKeys({ own, connect, onChecked: (done, total) => render.progress(`Checking the keys found: ${done} of ${total}…`) }, keys, mode);
  render.clearProgress();
  for (const list of result.own) {
    if (list.failure !== null) notes.push(`The key list of profile '${list.profile}' could not be read (${(list.failure as Error).message}): keys were checked without it.`);
  }
  return { verdicts: result.verdicts, own: result.own, notes, profileClient, connect };
}
