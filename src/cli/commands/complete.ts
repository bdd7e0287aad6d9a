import type { Command } from 'commander';
import { keyStatus } from '../../client/key-view.js';
import { PROBE } from '../../client/api.js';
import { savedKeyHint } from '../config/file.js';
import type { App } from '../program/program.js';
import { DYNAMIC_KINDS } from '../docs/tree.js';
import { sanitize } from '../text/text.js';
import { profilesOf, resolveSession, withKey, type ProfileSession, type Session } from '../session/session.js';


/** A person waits on a Tab key: a server that does not answer this fast gets no say. */
const COMPLETION_TIMEOUT_MS = 1_500;

/**
 * `svc __complete key-ids|profiles`, hidden: the words a completion script
 * offers, one a line, with a tab and a description (fish and zsh show it;
 * bash keeps the word). Every page of the list within one 1.5 s deadline,
 * no retries, no waiting on a rate limit; nothing at all on any failure,
 * since whatever it printed would land in the person's command line.
 */
export function register(program: Command, app: App): void {
  program
    .command('__complete', { hidden: true })
    .argument('<kind>', DYNAMIC_KINDS.join(' or '))
    .action(app.action('nothing', run));
}

export async function run(base: Session, kind: string): Promise<void> {
  let lines: string[] = [];
  try {
    // Resolved here, not before: a profile or address that cannot be read is one more reason to offer nothing.
    // One deadline of 1.5 s for everything, every page of the list included: a person is waiting on a Tab key.
    const options = { ...base.options, timeout: base.options.timeout ?? COMPLETION_TIMEOUT_MS, maxWait: 0 };
    const session = await resolveSession(base.io, options, base.deps, 'credentials');
    lines = kind === 'profiles' ? profiles(session) : kind === 'key-ids' ? await keyIds(session) : [];
  } catch {
    return;
  }
  // Words for the shell's completion, each made one line by oneLine: the renderer would turn the tab that separates a description into \t.
  if (lines.length > 0) base.io.stdout.write(`${lines.join('\n')}\n`);
}

function profiles(session: ProfileSession): string[] {
  const { config } = session;
  return profilesOf(config).map((name) => {
    return `${oneLine(name)}\t${savedKeyHint(config.getProfile(name)) ?? 'no key saved'}`;
  });
}

async function keyIds(session: ProfileSession): Promise<string[]> {
  if (!session.credentials) return [];
  const { client } = await withKey(session, session.credentials);
  const { keys, nowMs } = await client.listAllKeys(PROBE);
  return keys.flatMap((key) => {
    if (key.id === null || oneLine(key.id) !== key.id || /\s/.test(key.id)) return [];
    const about = [key.name, keyStatus(key, nowMs)].filter((p): p is string => p !== null).map(oneLine);
    return [`${key.id}\t${about.join(', ')}`];
  });
}

/** Server text on a script's line: escaped like all server text (a newline would make a second word), cut at 60. */
function oneLine(text: string): string {
  const flat = sanitize(text);
  return [...flat].length > 60 ? `${[...flat].slice(0, 59).join('')}…` : flat;
}
