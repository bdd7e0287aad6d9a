import type { Command } from 'commander';
import { confirmRevoke } from '../../dialogs/key-changes.js';
import type { Outcome } from '../../program/after-command.js';
import { parseDuration } from '../../domain/duration.js';
import { CliError, ExitCode, UsageError } from '../../errors/errors.js';
import type { PruneCriteria } from '../../domain/key-filters.js';
import { changeKeys, type ChangeRequest } from '../../operations/change-keys.js';
import { keysContext } from '../../operations/context.js';
import { planPrune } from '../../operations/keys.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { keyChangeDocument } from '../../views/documents.js';
import { keyChangeView } from '../../views/key-changes.js';
import { keyColumns, listCaveats, shown } from '../../views/keys.js';

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
    .action(app.action('key', run));
}

/** docs/contract.md §C8: lists first, confirms on a terminal, needs --yes elsewhere; exit 1 if any revoke failed. */
export async function run(session: KeySession, opts: PruneOptions): Promise<Outcome> {
  const criteria: PruneCriteria = {
    expired: opts.expired,
    disabled: opts.disabled,
    unusedForMs: opts.unusedFor === undefined ? undefined : parseDuration(opts.unusedFor),
  };
  if (!criteria.expired && !criteria.disabled && criteria.unusedForMs === undefined) {
    throw new UsageError('Say which keys to prune: --expired, --disabled and/or --unused-for <duration> (all given must match).');
  }
  const { client, render, options } = session;
  const plan = await planPrune(client, criteria);
  const { list, targets } = plan;
  for (const { record, reason } of plan.spared) {
    render.info(
      reason === 'in-use'
        ? `Leaving ${shown(record.view.id)} alone: it is the key svc is using.`
        : `Leaving ${shown(record.view.id)} alone: from the hints this server shows (its own: ${record.view.hint === null ? 'none' : shown(record.view.hint)}), svc cannot tell whether it is the key in use.`,
    );
  }
  const caveats = listCaveats(plan.unjudged, list.incomplete, 'left them alone');
  if (caveats.length > 0) render.warn(...caveats);
  // A list that may lack keys may lack some that match: prune does what it can, then says it could not do all.
  const partial = () => {
    if (list.incomplete !== null) throw new CliError('Not every key could be read, so keys that match may remain: prune again once the server lists them all.', ExitCode.failure);
  };
  const matched = targets.map((t) => t.document);
  // What a run that revokes nothing prints: the change document of every prune (views/documents.ts), its `changed` empty.
  const report = () => {
    if (options.json) render.json(keyChangeDocument('revoke', [], { goneIsDone: true, incomplete: list.incomplete, matched }));
  };
  if (targets.length === 0) {
    render.info(list.incomplete === null ? 'No key matches: nothing to prune.' : 'No key svc could read matches: nothing was pruned.');
    report();
    partial();
    return { list };
  }
  if (!options.json) render.table(keyColumns(client.keyHint, list.nowMs, render.columns), targets.map((t) => t.view));
  if (opts.dryRun) {
    render.info(`${targets.length === 1 ? 'This key' : `These ${targets.length} keys`} would be revoked (--dry-run: nothing was).`);
    report();
    partial();
    return { list };
  }
  if (!opts.yes) {
    if (!session.canPrompt) throw new UsageError('Refusing to revoke without confirmation: pass --yes (or --dry-run to only list them).');
    await confirmRevoke(session, targets.map((t) => t.view.id!), list.keys, list.nowMs, true);
  }
  // Gone already is what prune wanted; a failure does not stop the others.
  const request: ChangeRequest = { change: 'revoke', targets: { keys: targets.map((t) => ({ id: t.view.id!, name: null })) }, keepGoing: true, goneIsDone: true };
  const view = keyChangeView(session, request, { command: 'revoke', prune: { matched, incomplete: list.incomplete } });
  view.report(await changeKeys(keysContext(session), request, view.events));
  partial();
  return { list };
}
