/**
 * Where `keys create` and `keys rotate` hand a new secret instead of
 * printing it (docs/contract.md §C9): a .env file, a command's stdin, or
 * both, the file first.
 */
import { UsageError } from '../errors.js';
import { fileTargetProblem } from './to-file.js';

export interface DeliveryOptions {
  toFile?: string;
  toCommand?: string;
  force?: boolean;
}

export interface DeliveryPlan {
  file?: { path: string; force: boolean };
  command?: string;
}

/**
 * The plan the flags ask for, or null when they ask for none (the secret is
 * printed, as ever). A file that cannot take the secret is refused here,
 * before any key is made.
 */
export function deliveryPlan(opts: DeliveryOptions): DeliveryPlan | null {
  if (opts.force && opts.toFile === undefined) throw new UsageError('--force is about the file of --to-file: give --to-file <path> with it.');
  if (opts.toFile !== undefined && opts.toFile.trim() === '') throw new UsageError('--to-file needs a path: --to-file .env');
  if (opts.toCommand !== undefined && opts.toCommand.trim() === '') throw new UsageError("--to-command needs a command: --to-command 'gh secret set SVC_API_KEY'");
  if (opts.toFile === undefined && opts.toCommand === undefined) return null;
  const problem = opts.toFile === undefined ? null : fileTargetProblem(opts.toFile, opts.force === true);
  if (problem !== null) throw new UsageError(`--to-file: ${problem}; nothing was done.`);
  return {
    ...(opts.toFile === undefined ? {} : { file: { path: opts.toFile, force: opts.force === true } }),
    ...(opts.toCommand === undefined ? {} : { command: opts.toCommand }),
  };
}
