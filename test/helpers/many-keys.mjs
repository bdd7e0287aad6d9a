// A `--data` state file of one user whose workspace holds `keys` keys,
// written straight in the file format (src/server/snapshot.ts): minting a
// hundred thousand keys through the API would take minutes. Plain
// JavaScript, so bench/ uses it under node alone; many-keys.d.mts gives the
// tests its types.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Random symbols; the slight modulo bias does not matter for test data. */
export function symbols(alphabet, length) {
  let out = '';
  for (const byte of randomBytes(length)) out += alphabet[byte % alphabet.length];
  return out;
}

/**
 * Writes the file and returns the secret of its newest key, the only one
 * whose secret is kept. Keys are a millisecond apart, oldest first, named
 * `key <n>`; every tenth is disabled.
 */
export function writeManyKeys(path, { keys, plan = 'pro' }) {
  const userId = `usr_${symbols(BASE36, 20)}`;
  const workspaceId = `ws_${symbols(BASE36, 20)}`;
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const lines = [];
  let secret = '';
  for (let k = 0; k < keys; k++) {
    secret = `sk_${symbols(BASE62, 64)}`;
    lines.push(
      JSON.stringify({
        id: `key_${symbols(BASE36, 20)}`,
        userId,
        workspaceId,
        name: `key ${k + 1}`,
        hash: createHash('sha256').update(secret).digest('hex'),
        hint: `sk_${secret.slice(3, 7)}\u2026${secret.slice(-4)}`,
        enabled: k % 10 !== 0,
        createdAt: new Date(start + k).toISOString(),
        expiresAt: null,
        lastUsedAt: null,
      }),
    );
  }
  const user = { id: userId, name: 'Many keys', activeWorkspaceId: workspaceId, workspaceIds: [workspaceId] };
  const workspace = { id: workspaceId, name: 'Personal', plan };
  writeFileSync(
    path,
    `{"format":"svc-local-state","version":1,\n"users":[\n${JSON.stringify(user)}\n],\n"workspaces":[\n${JSON.stringify(workspace)}\n],\n"keys":[\n${lines.join(',\n')}\n]}\n`,
    { mode: 0o600 },
  );
  return { secret, userId, workspaceId };
}
