// tier: in-process
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findProjectProfile } from '../../src/cli/session/project-profile.js';

// docs/contract.md §C1: the profile a project's `.svc-profile` names, on a real directory tree.

let root: string;
let warnings: string[];
/** A refusal as a command that goes on without the file says it. */
const warn = ({ path, why }: { path: string; why: string }) => warnings.push(`${path} ${why}; it was ignored, and the default profile applies.`);
const dir = (...parts: string[]) => {
  const path = join(root, ...parts);
  mkdirSync(path, { recursive: true });
  return path;
};
const put = (content: string, ...parts: string[]) => {
  const path = join(dir(...parts), '.svc-profile');
  writeFileSync(path, content, { mode: 0o644 });
  return path;
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-project-'));
  warnings = [];
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('finding .svc-profile', () => {
  it('walks up from the working directory; the nearest file wins; the name is trimmed', () => {
    put('outer\n', 'home');
    const inner = put('  work \n', 'home', 'repo');
    expect(findProjectProfile(dir('home', 'repo', 'src', 'deep'), warn, join(root, 'home'))).toEqual({ name: 'work', path: inner });
    expect(findProjectProfile(dir('home', 'other'), warn, join(root, 'home'))).toEqual({ name: 'outer', path: join(root, 'home', '.svc-profile') });
    expect(warnings).toEqual([]);
  });

  it('stops at the home directory, which it reads: a file above home belongs to no project of yours', () => {
    put('above', '');
    expect(findProjectProfile(dir('home', 'repo'), warn, join(root, 'home'))).toBeNull();
    put('at-home', 'home');
    expect(findProjectProfile(dir('home', 'repo'), warn, join(root, 'home'))?.name).toBe('at-home');
  });

  it('outside home, walks up to the root', () => {
    put('shared', '');
    expect(findProjectProfile(dir('srv', 'app'), warn, join(root, 'home'))?.name).toBe('shared');
  });

  it('none anywhere is null, with nothing said', () => {
    expect(findProjectProfile(dir('a', 'b'), warn, root)).toBeNull();
    expect(warnings).toEqual([]);
  });

  it('a file that holds a key is refused with a warning that never shows the key; the walk does not go past it', () => {
    const key = `sk_${'Ab3'.repeat(21)}x`;
    put('work', '');
    const path = put(`${key}\n`, 'repo');
    expect(findProjectProfile(dir('repo', 'src'), warn, join(root, 'home'))).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(path);
    expect(warnings[0]).toContain('looks like it holds an API key');
    expect(warnings[0]).not.toContain(key.slice(3, 12));
    // Another service's token, or a key inside more text, is no profile name either.
    put(`profile=${'9f8e7d6c5b4a'.repeat(3)}`, 'repo');
    expect(findProjectProfile(dir('repo'), warn, root)).toBeNull();
    expect(warnings[1]).toContain('looks like it holds an API key');
    expect(warnings[1]).not.toContain('9f8e7d6c5b4a');
  });

  it('refuses what is not one profile name: empty, several lines, a control character, too large', () => {
    const cases = ['', '\n  \n', 'work\nbase-url=https://elsewhere.example', 'wo\u001b[2Jrk', 'x'.repeat(2000)];
    for (const content of cases) {
      put(content, 'repo');
      expect(findProjectProfile(dir('repo'), warn, root), JSON.stringify(content)).toBeNull();
    }
    expect(warnings.map((w) => w.replace(/^.*\.svc-profile /, ''))).toEqual([
      'is empty: it should hold a profile name; it was ignored, and the default profile applies.',
      'is empty: it should hold a profile name; it was ignored, and the default profile applies.',
      'holds more than one line: it should hold one profile name (its content is not shown); it was ignored, and the default profile applies.',
      "holds more than one line: it should hold one profile name (its content is not shown); it was ignored, and the default profile applies.".replace('more than one line', 'a control character'),
      'is larger than 1024 bytes; it was ignored, and the default profile applies.',
    ]);
  });

  it('refuses a file any user can change, and a directory of that name', () => {
    const path = put('work', 'repo');
    chmodSync(path, 0o666);
    expect(findProjectProfile(dir('repo'), warn, root)).toBeNull();
    expect(warnings[0]).toContain('can be changed by any user');
    dir('other', '.svc-profile');
    expect(findProjectProfile(dir('other'), warn, root)).toBeNull();
    expect(warnings[1]).toContain('is a directory, not a regular file');
  });

  it('follows a symbolic link within its directory, and takes a byte-order mark and CRLF in its stride', () => {
    writeFileSync(join(dir('repo'), 'profile-name'), '\uFEFFwork\r\n', { mode: 0o644 });
    symlinkSync('profile-name', join(dir('repo'), '.svc-profile'));
    expect(findProjectProfile(dir('repo'), warn, root)?.name).toBe('work');
    expect(warnings).toEqual([]);
  });

  it('refuses a symbolic link out of its directory, or to nothing, without reading or showing what it leads to (issue 37)', () => {
    // A token the user can read, the kind a hostile pull request would point the file at.
    const token = join(dir('home', '.config', 'gh'), 'token');
    writeFileSync(token, 'd7f1c1e0secretvalue\n', { mode: 0o600 });
    const path = join(dir('repo'), '.svc-profile');
    for (const target of [token, '../home/.config/gh/token', join(root, 'nowhere')]) {
      rmSync(path, { force: true });
      symlinkSync(target, path);
      expect(findProjectProfile(dir('repo', 'src'), warn, root, ['default', 'work'])).toBeNull();
    }
    expect(warnings.map((w) => w.replace(path, 'FILE'))).toEqual([
      'FILE is a symbolic link to a file outside its directory (links are followed only within it); it was ignored, and the default profile applies.',
      'FILE is a symbolic link to a file outside its directory (links are followed only within it); it was ignored, and the default profile applies.',
      'FILE is a symbolic link to nothing; it was ignored, and the default profile applies.',
    ]);
    expect(warnings.join('\n')).not.toContain('d7f1c1e0');
  });

  it('a name that is none of the profiles is refused, and not shown: the file may hold anything', () => {
    const path = put('d7f1c1e0-5b8e-4c1a-9f0e-2d3c4b5a6978\n', 'repo');
    expect(findProjectProfile(dir('repo'), warn, root, ['default', 'work'])).toBeNull();
    expect(warnings).toEqual([
      `${path} names no profile you have (its content is not shown; the profiles are: 'default', 'work'); it was ignored, and the default profile applies.`,
    ]);
    put('work\n', 'repo');
    expect(findProjectProfile(dir('repo'), warn, root, ['default', 'work'])).toEqual({ name: 'work', path });
  });
});
