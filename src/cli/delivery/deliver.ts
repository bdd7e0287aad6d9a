import { isWellFormedKey } from '../../contract/key-format.js';
import { DeliveryFailedError, DeliveryStepError, type Delivered } from '../errors/delivery-failed.js';
import type { DeliveryPlan } from './plan.js';
import type { CommandContext } from './to-command.js';
import { deliverToFile } from './to-file.js';

/**
 * Hands `secret` to each destination of the plan, the file first (local,
 * quick, and undone by nobody), then the command; stops at the first that
 * fails, with a DeliveryFailedError naming what was done before it.
 */
export async function deliver(plan: DeliveryPlan, secret: string, ctx: CommandContext): Promise<Delivered[]> {
  // What the server called the secret goes into a .env file or a program's input as it is, unescaped:
  // only a key's exact form may, never lines or escape sequences a hostile answer put there.
  if (!isWellFormedKey(secret)) {
    throw new DeliveryFailedError([], 'what the server answered as the secret is not an API key (sk_ and 64 letters and digits), so it went nowhere', null);
  }
  const delivered: Delivered[] = [];
  try {
    if (plan.file) delivered.push({ file: deliverToFile(plan.file.path, secret, plan.file.force) });
    if (plan.command !== undefined) {
      // Loaded only here: child_process costs every other command its start-up time.
      const { deliverToCommand } = await import('./to-command.js');
      await deliverToCommand(plan.command, secret, ctx);
      delivered.push({ command: plan.command });
    }
  } catch (error) {
    if (error instanceof DeliveryStepError) throw new DeliveryFailedError(delivered, error.reason, error.signal);
    throw error;
  }
  return delivered;
}
