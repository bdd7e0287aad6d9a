import { Option, type Command } from 'commander';
import type { Outcome } from '../../program/after-command.js';
import { deliveryPlan, onDeliveryFailureOption, type DeliveryOptions } from '../../delivery/plan.js';
import { UsageError } from '../../errors/errors.js';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { finishRotation, rotate } from '../../dialogs/rotate.js';
import type { RotateOptions, Rotation } from '../../operations/rotate.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { newKeyDocument } from '../../views/documents.js';
import { shown } from '../../views/keys.js';
import { keyState, stillDoes } from '../../domain/key-state.js';
import { refuseDiscardedStdout, secretWritten } from '../../views/show-new-key.js';

export interface RotateCommandOptions extends RotateOptions, DeliveryOptions {
  yes?: boolean;
  finish?: boolean;
  cancel?: boolean;
}

export function register(keys: Command, app: App): void {
  keys
    .command('rotate')
    .description('replace a key: create one with the same name and expiry, then revoke (or disable) the old one')
    .argument('[id]', 'the key to replace, by id or by the name of exactly one key (a pick-list is offered on a terminal when none is given; none with --finish or --cancel)')
    .addOption(new Option('--disable-old', 'disable the old key instead of revoking it, for a grace period').conflicts('overlap'))
    .option('--save', 'when the old key is the one in use, save the new one to the profile without asking')
    .option('-y, --yes', 'do not ask for confirmation (needed where nobody can be asked, except with --overlap)')
    .option('--overlap', 'leave the old key working until `svc keys rotate --finish`, so every consumer can move first')
    .option('--to-file <path>', 'write the new secret to a .env file (SVC_API_KEY=…, mode 0600) instead of printing it')
    .option('--to-command <command>', "run a shell command with the new secret on its stdin instead of printing it, e.g. 'gh secret set SVC_API_KEY'")
    .option('--force', "with --to-file: replace the file's SVC_API_KEY line if the file exists, keeping its other lines")
    .addOption(onDeliveryFailureOption())
    .addOption(
      new Option('--finish', "revoke the old key of the profile's pending --overlap rotation").conflicts(['overlap', 'disableOld', 'cancel', 'toFile', 'toCommand']),
    )
    .addOption(new Option('--cancel', "revoke the new key of the profile's pending --overlap rotation instead").conflicts(['overlap', 'disableOld', 'toFile', 'toCommand']))
    .addHelpText(
      'after',
      '\nThe new secret is printed once. The new key anchors to your active workspace, which may differ from the old key\'s. With --overlap both keys work until --finish; the profile remembers the rotation, and every command reminds you. With --to-file or --to-command the new secret is delivered, not printed. If delivery fails, the old key is left alone and svc exits 1; where nobody sees the terminal (stdout not a terminal, or CI set) the new key is revoked and no secret printed, on a terminal the secret is printed (--on-delivery-failure).\n\nExamples:\n  $ svc keys rotate key_0123abcd\n  $ NEW=$(svc keys rotate key_0123abcd --disable-old)\n  $ svc keys rotate key_0123abcd --yes --to-file .env   # in CI: nobody to ask\n  $ svc keys rotate key_0123abcd --save   # the key svc itself uses\n  $ svc keys rotate key_0123abcd --overlap   # later: svc keys rotate --finish\n  $ svc keys rotate key_0123abcd --overlap --to-command \'gh secret set KEY\'',
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, idArg: string | undefined, opts: RotateCommandOptions): Promise<Outcome | void> {
  const plan = deliveryPlan(opts, session.io);
  if (opts.finish || opts.cancel) {
    if (idArg !== undefined) throw new UsageError('--finish and --cancel take no key id: they act on the pending rotation of the profile.');
    return finishRotation(session, opts.finish ? 'finish' : 'cancel');
  }
  if (plan === null) refuseDiscardedStdout(session.io);
  const { ids } = await keysToActOn(session, idArg === undefined ? [] : [idArg], { command: 'rotate', many: false, yes: opts.yes, question: 'Key to rotate:' });
  // The old key is revoked or disabled at the end, as `keys revoke` would: where nobody can be asked, only --yes says so.
  // --overlap leaves it working, so it changes nothing that needs saying yes to.
  if (!opts.yes && !opts.overlap && !session.canPrompt) {
    throw new UsageError(`Refusing to rotate without confirmation: the old key is ${opts.disableOld ? 'disabled' : 'revoked'} at the end. Pass --yes (or run on a terminal to be asked).`);
  }
  const { rotation, delivered } = await rotate(session, ids[0]!, opts, plan);
  if (session.options.json) {
    session.render.json(newKeyDocument(rotation.created, { delivered }, rotation));
    // This document, which says what became of the old key, is the only place --json prints the new secret, so it comes last.
    if (delivered === null) await secretWritten(session.render, session.io, rotation.created.view.id, [oldKeyFate(rotation.oldId, rotation)]);
  }
  // The key-health step is then about the key the profile holds now.
  const savedHere = rotation.holders.includes(session.profileName) && session.credentials.source === 'profile';
  return savedHere ? { keyInUse: { apiKey: rotation.created.secret!, source: 'profile' } } : undefined;
}

function oldKeyFate(id: string, rotation: Rotation): string {
  const kept = stillDoes(keyState(rotation.old, rotation.created.nowMs));
  const fate = {
    revoked: 'was revoked',
    disabled: 'was disabled',
    gone: 'was already revoked by another run',
    'kept-overlap': `${kept} (\`svc keys rotate --cancel\` revokes the new key and ends the --overlap rotation)`,
    'kept-unsaved': kept,
  }[rotation.retired];
  return `The rotation went through (with --json the new secret is printed last): the old key ${shown(id)} ${fate}.`;
}
