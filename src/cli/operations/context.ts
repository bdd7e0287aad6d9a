import type { ApiClient } from '../../client/api.js';
import type { KeySession } from '../session/session.js';
import type { Deps } from '../terminal/deps.js';

/**
 * What an operation that changes keys runs with: the client and the
 * signals it listens for, and nothing that prints or asks, so that by its
 * type it cannot.
 */
export interface KeysContext {
  client: ApiClient;
  onSignal: Deps['onSignal'];
}

export function keysContext(session: KeySession): KeysContext {
  return { client: session.client, onSignal: session.deps.onSignal };
}
