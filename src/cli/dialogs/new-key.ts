/** The questions of a new key, asked by `keys create` and the manager alike. */
import { parseDuration } from '../domain/duration.js';
import { validateKeyName } from '../domain/keys.js';
import type { Session } from '../session/session.js';

export async function askKeyName(session: Session): Promise<string> {
  return (await (await session.prompts()).text('Name for the new key:', validateKeyName)).trim();
}

/** A duration as --expires-in takes it; empty for a key that never expires. */
export async function askExpiry(session: Session): Promise<{ expiresIn?: string }> {
  const expiresIn = await (await session.prompts()).text('Expires in (30d, 12h, 2w; empty for never):', (v) => {
    if (!v.trim()) return true;
    try {
      parseDuration(v);
      return true;
    } catch (error) {
      return (error as Error).message;
    }
  });
  return expiresIn.trim() ? { expiresIn: expiresIn.trim() } : {};
}
