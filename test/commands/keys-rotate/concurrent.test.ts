// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

/** Where, in rotation B's run, rotation A of the same key runs from start to end: B's steps are read, ask, create, show, (ask to save), retire. */
type Gap = 'before B' | 'at B’s question to go ahead' | 'at B’s question to save';

interface Seen {
  old: { id: string; secret: string };
  a: Awaited<ReturnType<typeof svc>>;
  b: Awaited<ReturnType<typeof svc>>;
  /** The keys of the rotated key's name left on the server. */
  left: { id: string; hint: string }[];
}

const hintOf = (secret: string) => `sk_${secret.slice(3, 7)}…${secret.slice(-4)}`;
/** The secret a run printed, on a terminal or piped; null when it printed none. */
const secretIn = (stdout: string) => /sk_[A-Za-z0-9]{64}/.exec(stdout)?.[0] ?? null;

/**
 * Two `svc keys rotate OLD` of one key, A run whole in one gap of B's run:
 * the interleavings the prompts of B on a terminal let a test fix, no timing
 * involved. `held`: the key is a profile's, which both save the new key to.
 */
async function race(name: string, gap: Gap, held: boolean): Promise<Seen> {
  const created = (JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout) as { key: { id: string; secret: string } }).key;
  const env = held ? { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: name } : local.env;
  if (held) expect((await svc(['login', '--with-key'], env, { input: created.secret })).exitCode).toBe(0);
  const runA = () => svc(['keys', 'rotate', created.id, '--yes', ...(held ? ['--save'] : [])], env);
  let a: Awaited<ReturnType<typeof svc>> | undefined;
  if (gap === 'before B') a = await runA();
  const script: Step[] = [{ confirm: true }, ...(held ? [{ confirm: true }] : [])];
  const scripted = scriptedPrompter(script);
  const prompter = {
    ...scripted,
    async confirm(message: string, initial?: boolean) {
      const at = message.startsWith('Rotate ') ? 'at B’s question to go ahead' : 'at B’s question to save';
      if (gap === at) a = await runA();
      return scripted.confirm(message, initial);
    },
  };
  const b = await svc(['keys', 'rotate', created.id], env, { tty: true, deps: { prompter } });
  const keys = JSON.parse((await svc(['keys', 'list', '--json', '--name-exact', name], local.env)).stdout).keys;
  return { old: created, a: a!, b, left: keys };
}

describe('two rotations of one key at once (issue 46)', () => {
  const cases: [Gap, boolean][] = [
    ['before B', false],
    ['at B’s question to go ahead', false],
    ['at B’s question to go ahead', true],
    ['at B’s question to save', true],
  ];

  it.each(cases)('A run whole %s (a profile’s key: %s): B says only what it did, and loses no key', async (gap, held) => {
    const { old, a, b, left } = await race(`race-${cases.findIndex((c) => c[0] === gap && c[1] === held)}`, gap, held);
    expect(a.exitCode, a.stderr).toBe(0);
    // The old key is gone, by A's revoke; B never claims it, never calls it working, never asks for it to be revoked again.
    expect(left.some((k) => k.id === old.id)).toBe(false);
    expect(b.stderr).not.toMatch(/Revoked the old key|Disabled the old key|could not be revoked|Retry with/);
    expect(b.stderr).not.toContain(`svc keys revoke ${old.id}`);
    expect(b.stderr).not.toMatch(new RegExp(`${old.id}\\S* (still works|keeps working)`));
    // Every key left of that name has its secret on the stdout of the run that made it: none is live unseen.
    const shown = [a.stdout, b.stdout].map(secretIn).filter((secret) => secret !== null).map(hintOf);
    for (const key of left) expect(shown).toContain(key.hint);
  });

  it('B that made its key and found the old one gone at its revoke says so, keeps its shown key, and exits 0', async () => {
    const { old, b, left } = await race('race-gone', 'at B’s question to go ahead', false);
    expect(b.exitCode, b.stderr).toBe(0);
    const flat = b.stderr.replace(/\n\s*/g, ' ');
    expect(flat).toContain(`The old key ${old.id} was already revoked when this run came to retire it: another run (a second rotation of it, or a revoke) ended it meanwhile.`);
    expect(flat).toContain('`svc keys list --name-exact race-gone` lists them');
    expect(left.map((k) => k.hint)).toContain(hintOf(secretIn(b.stdout)!));
    expect(left).toHaveLength(2);
  });

  it('B that lost the profile to A says the profile changed under it, and that this run left the old key', async () => {
    const { b } = await race('race-save', 'at B’s question to save', true);
    expect(b.exitCode).toBe(1);
    const flat = b.stderr.replace(/\n\s*/g, ' ');
    expect(flat).toContain("Profile 'race-save' no longer holds the key being rotated: another svc changed it meanwhile (a second rotation of the same key saves its own new key there, then revokes the old one)");
    expect(flat).toContain('this run left the old key');
  });

  it('with --json, B’s document says the old key was not revoked by it', async () => {
    const created = (JSON.parse((await svc(['keys', 'create', 'race-json', '--json'], local.env)).stdout) as { key: { id: string } }).key;
    const scripted = scriptedPrompter([{ confirm: true }]);
    const prompter = {
      ...scripted,
      async confirm(message: string, initial?: boolean) {
        expect((await svc(['keys', 'rotate', created.id, '--yes'], local.env)).exitCode).toBe(0);
        return scripted.confirm(message, initial);
      },
    };
    const b = await svc(['keys', 'rotate', created.id, '--json'], local.env, { tty: true, deps: { prompter } });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).previous).toEqual({ id: created.id, revoked: false });
    expect(b.stderr.replace(/\n\s*/g, ' ')).toContain(`The old key ${created.id} was already revoked when this run came to retire it`);
  });
});
