import type { Command } from 'commander';
import type { Outcome } from '../../program/after-command.js';
import { parseDuration } from '../../domain/duration.js';
import { CliError, ExitCode, UsageError } from '../../errors/errors.js';
import { auditKeys, auditVerdict, type AuditPolicy } from '../../operations/audit.js';
import type { App } from '../../program/program.js';
import { asUnfinished } from '../../views/failure.js';
import type { KeySession } from '../../session/session.js';
import { auditColumns, auditDocument, auditScope, perRule, type PolicyGiven } from '../../views/audit.js';
import { clip } from '../../text/text.js';

export interface AuditOptions {
  maxAge?: string;
  requireExpiry?: boolean;
  expiringWithin?: string;
  unusedFor?: string;
  skipDisabled?: boolean;
  strict?: boolean;
}

export function register(keys: Command, app: App): void {
  const action = app.action('key', run);
  keys
    .command('audit')
    .description('check every key against a policy, for CI: list the keys that break it, exit 1 if any does')
    .option('--max-age <duration>', 'keys created longer ago than the duration break it: 90d')
    .option('--require-expiry', 'keys that never expire break it')
    .option('--expiring-within <duration>', 'keys that expire within the duration break it: 14d')
    .option('--unused-for <duration>', 'keys not used (or, never used, created) within the duration break it: 30d')
    .option('--skip-disabled', 'leave disabled keys out (they are audited: one `keys enable` makes them work)')
    .option('--strict', 'a key a rule could not judge (the server shows no value for its field) fails the audit too')
    .addHelpText(
      'after',
      '\nRead-only. Expired (and revoked) keys are left out: they cannot authenticate again. Exit 0 when every key passes, 1 when a key breaks the policy (with --strict, or cannot be judged), 6 when the audit could not finish (server, network, a list that may be incomplete); 2, 3 and 5 as for every command.\n\nExamples:\n  $ svc keys audit --max-age 90d --require-expiry\n  $ svc keys audit --max-age 90d --expiring-within 14d --unused-for 30d --strict\n  $ svc keys audit --unused-for 30d --json | jq -r \'.keys[].id\'',
    )
    // A failure that is exit 1 elsewhere must not read as "policy broken" here.
    .action(async (...args: unknown[]) => {
      try {
        await action(...args);
      } catch (error) {
        throw unfinished(error, (args[args.length - 1] as Command).optsWithGlobals().verbose === true);
      }
    });
}

/** The policy is broken: exit 1, said after the table, never confused with a failure to audit. */
export class PolicyBrokenError extends CliError {
  constructor(lines: readonly string[]) {
    super(lines, ExitCode.failure);
    this.name = 'PolicyBrokenError';
  }
}

/** docs/contract.md §C5: what is exit 1 for other commands is exit 6 for the audit, so that 1 means only "the policy is broken". */
function unfinished(error: unknown, verbose: boolean): unknown {
  return error instanceof PolicyBrokenError ? error : asUnfinished(error, verbose, 'audit');
}

/** docs/contract.md §C8. */
export async function run(session: KeySession, opts: AuditOptions): Promise<Outcome> {
  const policy: AuditPolicy = {
    maxAgeMs: duration(opts.maxAge),
    requireExpiry: opts.requireExpiry === true,
    expiringWithinMs: duration(opts.expiringWithin),
    unusedForMs: duration(opts.unusedFor),
    skipDisabled: opts.skipDisabled === true,
  };
  if (policy.maxAgeMs === undefined && !policy.requireExpiry && policy.expiringWithinMs === undefined && policy.unusedForMs === undefined) {
    throw new UsageError('Say what the policy is: --max-age, --require-expiry, --expiring-within and/or --unused-for (see `svc keys audit --help`).');
  }
  const given: PolicyGiven = {
    maxAge: opts.maxAge ?? null,
    requireExpiry: policy.requireExpiry === true,
    expiringWithin: opts.expiringWithin ?? null,
    unusedFor: opts.unusedFor ?? null,
    skipDisabled: policy.skipDisabled === true,
    strict: opts.strict === true,
  };
  const { client, render, options, io } = session;
  const audit = await auditKeys(client, policy);
  const { findings, list } = audit;
  const breaking = findings.filter((f) => f.breaks.length > 0);
  const unjudged = findings.filter((f) => f.notJudged.length > 0);
  const verdict = auditVerdict(audit, given.strict);

  if (options.json) render.json(auditDocument(audit, given, verdict === 'passed'));
  else if (findings.length > 0 || !io.stdoutIsTTY) {
    render.table(auditColumns(list.nowMs, render.columns), findings);
    if (io.stdoutIsTTY && findings.some((f) => f.inUse)) render.info('* the key svc is using');
  }

  const scope = auditScope(audit);
  if (unjudged.length > 0) {
    const count = unjudged.length === 1 ? '1 key' : `${unjudged.length} keys`;
    const fate = given.strict ? 'they fail the audit (--strict)' : 'they are listed, not counted as passing; --strict fails the audit for them';
    render.warn(`${count} could not be judged by every rule (${perRule(unjudged, (f) => f.notJudged)}), for want of a value svc can read: ${fate}.`);
  }
  if (list.incomplete !== null) render.warn(`The key list may be incomplete: ${clip(list.incomplete, 200)}; keys svc did not see were not audited.`);
  if (verdict === 'broken') {
    const of = `${audit.audited} ${audit.audited === 1 ? 'key' : 'keys'} audited`;
    const lines = breaking.length > 0 ? [`${breaking.length} of the ${of} ${breaking.length === 1 ? 'breaks' : 'break'} the policy (${perRule(breaking, (f) => f.breaks)}).`] : [];
    if (given.strict && unjudged.length > 0) lines.push(`${unjudged.length} of the ${of} could not be judged, and --strict was given.`);
    throw new PolicyBrokenError(lines);
  }
  if (verdict === 'unsure') throw new CliError(`Audited ${scope}; none breaks the policy, but the list may lack keys, so the audit could not finish.`, ExitCode.unfinished);
  render.success(`Audited ${scope}: ${unjudged.length === 0 ? 'every key passes' : 'none breaks the policy where it could be judged'}.`);
  return { list };
}

function duration(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseDuration(text);
}
