// tier: in-process
import { describe, expect, it } from 'vitest';
import { readKey } from '../../src/client/key-view.js';
import { notFoundAmong } from '../../src/cli/domain/keys.js';

const keys = [readKey({ id: 'key_abc123', name: 'h3' }), readKey({ id: 'key_other9', name: 'laptop' })];

describe('a key the server answered 404 to', () => {
  it('gets the keys it most likely meant, and the command to run', () => {
    expect(notFoundAmong(['key_abc124'], keys, 'disable').lines[0]).toMatch(/Did you mean key_abc123 \('h3'\) \(`svc keys disable key_abc123`\)\?$/);
  });

  it('for a revoke, which cannot be undone, offers the near miss to view, never a revoke of another key', () => {
    const line = notFoundAmong(['key_abc124'], keys, 'revoke').lines[0]!;
    expect(line).toMatch(/Did you mean key_abc123 \('h3'\) \(`svc keys view key_abc123`\)\?$/);
    expect(line).not.toContain('svc keys revoke');
  });

  it('is not offered as its own near miss when the list still shows it', () => {
    const { lines, exitCode } = notFoundAmong(['key_abc123'], keys, 'revoke');
    expect(lines).toEqual(["The server answered 404 to key_abc123, though its key list shows that key: svc cannot say whether it is there."]);
    expect(exitCode).toBe(4);
  });
});
