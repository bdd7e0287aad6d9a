/**
 * Where `keys create` and `keys rotate` hand a new secret instead of
 * printing it (docs/contract.md §C9): a .env file, a command's stdin, or
 * both, the file first.
 */
import { Option } from 'commander';
import { readEnv } from '../terminal/environment.js';
import { UsageError } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import { fileTargetProblem } from './to-file.js';

/** What a failed delivery does with the secret: print it, or keep it from the output and revoke its key. */
export const ON_DELIVERY_FAILURE = ['revoke', 'print'] as const;
export type OnDeliveryFailure = (typeof ON_DELIVERY_FAILURE)[number];

/** The option as `keys create` and `keys rotate` take it. */
export function onDeliveryFailureOption(): Option {
  return new Option(
    '--on-delivery-failure <what>',
    'when --to-file or --to-command fails: revoke the new key without printing its secret, or print the secret (default: revoke where stdout is not a terminal or CI is set, else print)',
  ).choices(ON_DELIVERY_FAILURE);
}

export interface DeliveryOptions {
  toFile?: string;
  toCommand?: string;
  force?: boolean;
  onDeliveryFailure?: OnDeliveryFailure;
}

export interface DeliveryPlan {
  file?: { path: string; force: boolean };
  command?: string;
  onFailure: OnDeliveryFailure;
}

/**
 * The plan the flags ask for, or null when they ask for none (the secret is
 * printed, as ever). A file that cannot take the secret is refused here,
 * before any key is made.
 */
export function deliveryPlan(opts: DeliveryOptions, io: IO): DeliveryPlan | null {
  if (opts.onDeliveryFailure !== undefined && opts.toFile === undefined && opts.toCommand === undefined) {
    throw new UsageError('--on-delivery-failure is about --to-file and --to-command: give one of them with it.');
  }
  if (opts.force && opts.toFile === undefined) throw new UsageError('--force is about the file of --to-file: give --to-file <path> with it.');
  if (opts.toFile !== undefined && opts.toFile.trim() === '') throw new UsageError('--to-file needs a path: --to-file .env');
  if (opts.toCommand !== undefined && opts.toCommand.trim() === '') throw new UsageError("--to-command needs a command: --to-command 'gh secret set SVC_API_KEY'");
  if (opts.toFile === undefined && opts.toCommand === undefined) return null;
  const problem = opts.toFile === undefined ? null : fileTargetProblem(opts.toFile, opts.force === true);
  if (problem !== null) throw new UsageError(`--to-file: ${problem}; nothing was done.`);
  return {
    onFailure: opts.onDeliveryFailure ?? defaultOnFailure(io),
    ...(opts.toFile === undefined ? {} : { file: { path: opts.toFile, force: opts.force === true } }),
    ...(opts.toCommand === undefined ? {} : { command: opts.toCommand }),
  };
}

/**
 * Where nobody watches the terminal (stdout is not one, or CI is set),
 * stdout is a log that outlives the run: a secret printed there is a leak,
 * and a key whose secret nobody saw is of no use to anyone, so it goes.
 * On a terminal the person sees the secret and can still store it.
 */
function defaultOnFailure(io: IO): OnDeliveryFailure {
  return !io.stdoutIsTTY || Boolean(readEnv(io.env, 'CI')) ? 'revoke' : 'print';
}
