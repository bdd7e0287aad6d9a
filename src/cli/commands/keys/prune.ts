import type { Command } from 'commander';
import { keyDocuments, readKey } from '../../../client/key-view.js';
import type { Context } from '../../context.js';
import { parseDuration } from '../../duration.js';
import { CliError, ExitCode, UsageError } from '../../errors.js';
import { matchesPrune, type PruneCriteria } from '../../key-filters.js';
import { printJson, printRows, visible } from '../../output.js';
import type { App } from '../../program.js';
import { isKeyInUse, isNotFound } from '../../keys.js';
import { keyColumns } from './list.js';

export interface PruneOptions {
  expired?: boolean;
  disabled?: boolean;
  unusedFor?: string;
  dryRun?: boolean;
  yes?: boolean;
}

export function register(keys: Command, app: App): void {
  keys
    .command('prune')
    .description('revoke the keys that match every criterion given, never the key svc is using')
    .option('--expired', 'keys that have expired')
    .option('--disabled', 'keys that are disabled')
    .option('--unused-for <duration>', 'keys not used (or, never used, created) within the duration: 90d, 12w')
    .option('--dry-run', 'only list what would be revoked')
    .option('-y, --yes', 'do not ask for confirmation')
    .addHelpText(
      'after',
      '\nExamples:\n  $ svc keys prune --expired --dry-run\n  $ svc keys prune --disabled --unused-for 90d --yes',
    )
    .action(app.action(run));
}

/** docs/contract.md §C8: lists first, confirms on a terminal, needs --yes elsewhere; exit 1 if any revoke failed. */
export async function run(ctx: Context, opts: PruneOptions): Promise<void> {
  const criteria: PruneCriteria = {
    expired: opts.expired,
    disabled: opts.disabled,
    unusedForMs: opts.unusedFor === undefined ? undefined : parseDuration(opts.unusedFor),
  };
  if (!criteria.expired && !criteria.disabled && criteria.unusedForMs === undefined) {
    throw new UsageError('Say which keys to prune: --expired, --disabled and/or --unused-for <duration> (all given must match).');
  }
  const client = await ctx.client();
  const { body } = await client.listKeys();
  const now = client.serverNow();
  const inUse = client.keyHint;
  const matched = keyDocuments(body)
    .map((document) => ({ document, view: readKey(document) }))
    .filter(({ view }) => view.id !== null && matchesPrune(view, criteria, now));
  const targets = matched.filter(({ view }) => {
    const used = isKeyInUse(view, inUse);
    if (used === false) return true;
    ctx.msg.info(
      used
        ? `Leaving ${visible(view.id!)} alone: it is the key svc is using.`
        : `Leaving ${visible(view.id!)} alone: this server shows no key hints, so svc cannot tell whether it is the key in use.`,
    );
    return false;
  });

  const report = (revoked: string[], failed: { id: string; error: string }[]) => {
    if (ctx.globals.json) printJson(ctx.io, { keys: targets.map((t) => t.document), revoked, failed });
  };
  if (targets.length === 0) {
    ctx.msg.info('No key matches: nothing to prune.');
    return report([], []);
  }
  if (!ctx.globals.json) printRows(ctx.io, keyColumns(inUse, now), targets.map((t) => t.view));
  if (opts.dryRun) {
    ctx.msg.info(`${targets.length === 1 ? 'This key' : `These ${targets.length} keys`} would be revoked (--dry-run: nothing was).`);
    return report([], []);
  }
  await confirm(ctx, targets.length, opts.yes === true);

  const revoked: string[] = [];
  const failed: { id: string; error: string }[] = [];
  for (const { view } of targets) {
    const id = view.id!;
    try {
      await client.revokeKey(id);
      revoked.push(id);
      ctx.msg.success(`Revoked ${visible(id)}.`);
    } catch (error) {
      // Gone already is what prune wanted.
      if (isNotFound(error)) {
        revoked.push(id);
        ctx.msg.info(`${visible(id)} was already gone.`);
        continue;
      }
      failed.push({ id, error: (error as Error).message });
    }
  }
  report(revoked, failed);
  if (failed.length > 0) {
    throw new CliError(
      `${failed.length} of ${targets.length} keys could not be revoked:\n${failed.map((f) => `  ${visible(f.id)}: ${visible(f.error)}`).join('\n')}`,
      ExitCode.failure,
    );
  }
}

async function confirm(ctx: Context, count: number, yes: boolean): Promise<void> {
  if (yes) return;
  if (!ctx.canPrompt) throw new UsageError('Refusing to revoke without confirmation: pass --yes (or --dry-run to only list them).');
  const prompts = await ctx.prompts();
  if (!(await prompts.confirm(`Revoke ${count === 1 ? 'this key' : `these ${count} keys`}? This cannot be undone.`))) {
    throw new CliError('Cancelled; nothing was revoked.', ExitCode.failure);
  }
}
