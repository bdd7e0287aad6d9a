import { clip } from '../text/text.js';
import { loginCommand, UsageError } from './errors.js';

/**
 * A profile given as an argument (`profile use|remove|move-key NAME`) that
 * does not exist: a usage error, with what there is `instead` ("the
 * profiles are: …. Did you mean …?") and the login that would create it.
 */
export function noSuchProfileArgument(name: string, instead: string): UsageError {
  return new UsageError([`Profile '${clip(name, 200)}' does not exist; ${instead}`, `\`${loginCommand(name)}\` creates it with a key.`]);
}
