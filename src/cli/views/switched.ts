import { isKeyInUse } from '../domain/keys.js';
import type { Switched } from '../operations/keys.js';
import type { KeySession } from '../session/session.js';
import { shown } from './keys.js';

/**
 * What `keys enable`/`disable` and the manager's switch say once the PATCH
 * answered; with --json, the key's document too, unless the caller prints
 * one document for several keys (`printDocument` false).
 */
export function showSwitched(session: KeySession, id: string, enabled: boolean, result: Switched, printDocument = true): void {
  const { render, options, client } = session;
  if (options.json && printDocument) render.json(result.document);
  const label = `${shown(id)}${result.view.name === null ? '' : ` (${shown(result.view.name)})`}`;
  // A 204 is done as asked; whether it was done just now or before, svc cannot tell (docs/contract.md §C3).
  if (result.changed) render.success(`${enabled ? 'Enabled' : 'Disabled'} ${label}.`);
  else render.success(`${label} is ${enabled ? 'enabled' : 'disabled'}.`);
  if (enabled) return;
  const inUse = isKeyInUse(result.view, client.keyHint);
  if (inUse) render.warn('That is the key svc is using: requests with it now answer 401 until it is enabled again.');
  else if (inUse === null) render.info("(The server shows no key hint in svc's form, so svc cannot tell whether that was the key it is using.)");
}
