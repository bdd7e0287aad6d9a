import { ApiError } from '../../../client/errors.js';
import { keyStatus, type KeyView } from '../../../client/key-view.js';
import { CliError, ExitCode, UsageError } from '../../errors.js';
import { visible } from '../../output.js';

/** A 404 from the service; an HTML 404 page from something else is no answer about the key. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.foreignBody === null;
}

export function keyNotFound(ids: string): CliError {
  return new CliError(
    `No key with id ${visible(ids)}: it never existed, belongs to another user, or was already revoked.`,
    ExitCode.notFound,
  );
}

/**
 * Ids are opaque (docs/contract.md §C6): any server may shape them its own way. Only
 * what no URL can carry as one path segment is refused: an empty id would
 * address the whole collection, and URL parsers resolve `.` and `..` (even
 * percent-encoded) to another path.
 */
export function checkKeyId(id: string): string {
  if (id.trim() === '' || id === '.' || id === '..') {
    throw new UsageError(`'${visible(id)}' cannot name a key: no URL can carry it as a path segment (see \`svc keys list\`).`);
  }
  return id;
}

/** Whether this is the key svc is using; unknowable when the server shows no hints. */
export function isKeyInUse(key: KeyView, inUse: string | undefined): boolean | null {
  if (inUse === undefined || key.hint === null) return null;
  return key.hint === inUse;
}

/** One line for a key in pick-lists and confirmations. */
export function describeKey(key: KeyView, inUse: string | undefined, nowMs: number): string {
  const parts = [key.id, key.name, key.hint, keyStatus(key, nowMs)].filter((p): p is string => p !== null).map(visible);
  return `${parts.join('  ')}${isKeyInUse(key, inUse) ? '  (the key in use)' : ''}`;
}
