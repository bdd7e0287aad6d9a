import { ApiError } from '../../../client/errors.js';
import { KEY_ID_PATTERN } from '../../../contract/paths.js';
import { CliError, ExitCode, UsageError } from '../../errors.js';

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

export function keyNotFound(ids: string): CliError {
  return new CliError(
    `No key with id ${ids}: it never existed, belongs to another user, or was already revoked.`,
    ExitCode.notFound,
  );
}

/** Ids are `[a-z0-9_]`; catching a typo here saves a request and a confusing 404. */
export function checkKeyId(id: string): string {
  if (!KEY_ID_PATTERN.test(id)) {
    throw new UsageError(`'${id}' is not a key id. Ids look like key_… (see \`svc keys list\`).`);
  }
  return id;
}
