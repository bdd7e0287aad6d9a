import type { Command } from 'commander';
import { ApiError, NetworkError } from '../../client/errors.js';
import { readWorkspace } from '../../client/key-view.js';
import type { Outcome } from '../program/after-command.js';
import { CliError, endingSignal, NotAuthenticatedError, notLoggedIn, PassedOnStatus, UnknownProfileError } from '../errors/errors.js';
import { describeFailure, failureDocument, NOT_RETRIED, type FailureDocument } from '../views/failure.js';
import { statusContext } from '../operations/context.js';
import { readAllStatuses, readStatus, type StatusReport } from '../operations/status.js';
import { allProfilesContext } from '../operations/context.js';
import { failed, statusAllColumns, statusAllDocument } from '../views/status-all.js';
import { ExitCode, UsageError } from '../errors/errors.js';
import { readEnv } from '../terminal/environment.js';
import type { App } from '../program/program.js';
import { describeRateLimit } from '../../client/rate-limit.js';
import { tone, type Line, type Segment } from '../text/text.js';
import type { ProfileSession } from '../session/session.js';
import { shown } from '../views/keys.js';
import { activeFrom } from '../views/profiles.js';

export function register(program: Command, app: App): void {
  program
    .command('status')
    .description('show the server, profile, key, workspace, plan and rate limit in use')
    .option('--all', "check every profile's key against its server, all at once, one line each")
    .addHelpText(
      'after',
      '\nEach request once, never retried or delayed: the block is printed whatever the state, with ✗ where something failed. The Key line says where the key came from: SVC_API_KEY, or the profile, in the config file or the OS keyring. Exit 0 when the key works (rate limited included), 3 without a working key (a keyring that is locked or cannot be reached too), 1 when the server cannot be reached.\n\nWith --all, as `gh auth status` checks every account: each profile\'s own key against its own server (never SVC_API_KEY, SVC_BASE_URL or --base-url), concurrently, one row each: live, rejected (401), unreachable, failed, not read from the keyring, or no key. Exit 0 when every saved key works (a profile without a key is no failure), 3 when any key is rejected or cannot be read, else 1 when any server could not be reached or answered an error.\n\nExamples:\n  $ svc status\n  $ svc status --json | jq .workspace.plan\n  $ svc status --all\n  $ svc status --all --json | jq -r \'.profiles[] | select(.state != "live") | .profile\'',
    )
    .action(app.action('credentials', run));
}

const SOURCE_TEXT = {
  flag: 'from --base-url',
  env: 'from SVC_BASE_URL',
  profile: 'from the profile',
  default: 'default: the local reference server',
} as const;

/** The `--json` document: the facts, and what failed as a failed command's `--json` document tells it (docs/cli-error.schema.json); null when the key works. */
type Report = StatusReport & { error: FailureDocument['error'] | null };

/** Where a field's value starts: a value broken at the terminal's width goes on under it. */
const LABEL_WIDTH = 12;

export interface StatusOptions {
  all?: boolean;
}

export async function run(session: ProfileSession, opts: StatusOptions = {}): Promise<Outcome | void> {
  if (opts.all) return runAll(session);
  const { report: facts, failure, workspaceOffered, credentials, list } = await readStatus(statusContext(session));
  const verbose = session.options.verbose === true;
  const report: Report = { ...facts, error: failure === undefined ? null : failureDocument(failure, describeFailure(failure, { verbose })).error };
  if (session.options.json) session.render.json(report);
  // The same block on a terminal and in a pipe: people and scripts read it alike (`grep '^Key:'`).
  else session.render.text(statusFields(report, failure, workspaceOffered).map(({ label, human }) => [label.padEnd(LABEL_WIDTH), ...[human].flat()]), LABEL_WIDTH);
  if (failure !== undefined) throw beyondBlock(failure, verbose);
  return { list, keyInUse: credentials ?? undefined };
}

/**
 * The failure as stderr tells it after the block, without what the block
 * already said: its first line (the ✗ on the Key or Server line). An
 * answer the block says only in a word (`rejected (401)`, `answered 503`)
 * is told whole, but for a 401's key and server, which the block names.
 * Nothing left, the exit code alone.
 */
function beyondBlock(failure: unknown, verbose: boolean): CliError {
  const { exitCode, lines } = describeFailure(failure, { verbose, originShown: true });
  // status asks once and never retries: that it did not is no news.
  const rest = (failure instanceof ApiError ? lines : lines.slice(1)).filter((line) => line !== NOT_RETRIED);
  // The block says only that the profile does not exist: which ones do, and the one probably meant, come here.
  if (failure instanceof UnknownProfileError && failure.others) rest.unshift(`${failure.others[0]!.toUpperCase()}${failure.others.slice(1)}`);
  // A signal that stopped the reads (Ctrl-C during a slow answer) still ends svc by it.
  const signal = endingSignal(failure);
  return rest.length === 0 ? new PassedOnStatus(exitCode, signal) : new CliError(rest, exitCode, failure, signal);
}

function statusFields(report: Report, failure: unknown, workspaceOffered: boolean): { label: string; human: Line }[] {
  const bad = (text: string): Segment[] => [tone('✗', 'red'), ` ${text}`];
  const fields: { label: string; human: Line }[] = [];
  const field = (label: string, human: Line) => fields.push({ label: `${label}:`, human });

  // The plain `default` is what applies when nothing chose a profile; any other says what chose it.
  field('Profile', report.profileSource === 'default' ? report.profile : `${report.profile} (${profileWhy(report)})`);
  const server = `${report.baseUrl} (${SOURCE_TEXT[report.baseUrlSource!]})`;
  if (failure instanceof NetworkError) field('Server', [server, '  ', ...bad(`no answer: ${shown(failure.message)}`)]);
  else if (failure instanceof ApiError && failure.status !== 401) field('Server', [server, '  ', ...bad(`answered ${failure.status}`)]);
  else field('Server', server);

  const key = report.key;
  if (key === null) {
    const none =
      failure instanceof UnknownProfileError
        ? `none: profile '${shown(report.profile)}' does not exist`
        : failure instanceof NotAuthenticatedError
          ? notLoggedIn(report.profile)
          : firstLine(report);
    field('Key', bad(none));
    return fields;
  }
  const from = { env: 'from SVC_API_KEY', file: 'from the profile, in the config file', keyring: 'from the profile, in the OS keyring' }[key.store];
  const verdict: Line =
    key.valid === true
      ? [tone('✓', 'green'), ' valid']
      : key.valid === false
        ? bad('rejected (401)')
        : failure instanceof NetworkError || failure instanceof ApiError
          ? tone('not checked', 'dim')
          : bad(firstLine(report));
  field('Key', [`${key.hint} (${from})  `, ...[verdict].flat()]);
  if (key.valid !== true) return fields;

  if (report.rateLimit?.limited) {
    field('Workspace', tone('not read: rate limited', 'dim'));
  } else if (!workspaceOffered) {
    field('Workspace', 'not reported: this server has no GET /workspace');
  } else {
    const ws = readWorkspace(report.workspace);
    field('Workspace', ws.id === null ? shown(ws.name) : `${shown(ws.name)} (${shown(ws.id)})`);
    field('Plan', `${shown(ws.plan)}${ws.requestsPerMinute === null ? '' : `, ${ws.requestsPerMinute} requests/minute`}`);
  }
  const rateLimit = report.rateLimit;
  field('Rate limit', rateLimit?.limited ? bad(describeRateLimit(rateLimit)) : describeRateLimit(rateLimit));
  if (report.latencyMs !== null) field('Latency', `${report.latencyMs} ms`);
  return fields;
}

function profileWhy({ profileSource, profileFile }: StatusReport): string {
  return profileSource === 'config' ? 'the default profile, chosen by `svc profile use`' : `from ${activeFrom(profileSource, profileFile)}`;
}

function firstLine(report: Report): string {
  return report.error?.message.split('\n')[0] ?? '';
}

/**
 * `svc status --all`: a row per profile, then, when any profile's key does
 * not work, a line naming those and the exit code of the worst (3 for a key
 * that is rejected or cannot be read, else 1).
 */
async function runAll(session: ProfileSession): Promise<void> {
  if (session.options.baseUrl) throw new UsageError("--all checks each profile against its own server: --base-url names one. Use `svc status --base-url URL` for that server.");
  const statuses = await readAllStatuses(allProfilesContext(session));
  const verbose = session.options.verbose === true;
  const { render, io } = session;
  if (session.options.json) render.json(statusAllDocument(statuses, verbose));
  else render.table(statusAllColumns(verbose), statuses);
  if (!session.options.json && io.stdoutIsTTY) render.info(`* the profile svc uses here (${activeFrom(session.profileSource, session.profileFile)})`);
  if (readEnv(io.env, 'SVC_API_KEY') || readEnv(io.env, 'SVC_BASE_URL')) {
    render.warn("SVC_API_KEY or SVC_BASE_URL is set: other commands use it instead of a profile's own; --all checked the profiles' own keys and servers.");
  }
  const bad = statuses.filter((s) => failed(s.state));
  if (statuses.every((s) => s.state === 'none')) {
    throw new CliError(['No profile holds a key: `svc login` saves one.'], ExitCode.unauthenticated);
  }
  if (bad.length === 0) return;
  const rejected = bad.some((s) => s.state === 'rejected' || s.state === 'unreadable');
  const names = bad.map((s) => `${shown(s.report.profile)} (${s.state})`).join(', ');
  throw new CliError([`${bad.length} of ${statuses.length} profiles have a key that does not work: ${names}.`], rejected ? ExitCode.unauthenticated : ExitCode.failure);
}
