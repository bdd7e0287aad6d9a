import type { Command } from 'commander';
import { keyStatus, readKeyList } from '../../client/key-view.js';
import { PROBE } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import type { Context } from '../context.js';
import type { App } from '../program.js';

/** What the completion scripts ask for; the command tree names which arguments and options take which. */
export const DYNAMIC_KINDS = ['key-ids', 'profiles'] as const;
export type DynamicKind = (typeof DYNAMIC_KINDS)[number];

/** A person waits on a Tab key: a server that does not answer this fast gets no say. */
const COMPLETION_TIMEOUT_MS = 1_500;

/**
 * `svc __complete key-ids|profiles`, hidden: the words a completion script
 * offers, one a line, with a tab and a description (fish and zsh show it;
 * bash keeps the word). One request, no retries, no waiting on a rate
 * limit; nothing at all on any failure, since whatever it printed would
 * land in the person's command line.
 */
export function register(program: Command, app: App): void {
  program
    .command('__complete', { hidden: true })
    .argument('<kind>', DYNAMIC_KINDS.join(' or '))
    .action(app.action(run));
}

export async function run(ctx: Context, kind: string): Promise<void> {
  let lines: string[] = [];
  try {
    lines = kind === 'profiles' ? await profiles(ctx) : kind === 'key-ids' ? await keyIds(ctx) : [];
  } catch {
    return;
  }
  if (lines.length > 0) ctx.io.stdout.write(`${lines.join('\n')}\n`);
}

async function profiles(ctx: Context): Promise<string[]> {
  const config = await ctx.config();
  return [...new Set([...config.profileNames(), 'default'])].sort().map((name) => {
    const { apiKey } = config.getProfile(name);
    return `${oneLine(name)}\t${apiKey ? keyHint(apiKey) : 'no key saved'}`;
  });
}

async function keyIds(ctx: Context): Promise<string[]> {
  const creds = await ctx.findCredentials();
  if (!creds) return [];
  const client = await ctx.client(creds);
  const { body } = await client.listKeys({ ...PROBE, timeoutMs: ctx.globals.timeout ?? COMPLETION_TIMEOUT_MS });
  const nowMs = client.serverNow();
  return readKeyList(body).flatMap((key) => {
    if (key.id === null || oneLine(key.id) !== key.id || /\s/.test(key.id)) return [];
    const about = [key.name, keyStatus(key, nowMs)].filter((p): p is string => p !== null).map(oneLine);
    return [`${key.id}\t${about.join(', ')}`];
  });
}

/** Server text on a script's line: no control characters (a newline would make a second word), cut at 60. */
function oneLine(text: string): string {
  const flat = text.replace(/[\x00-\x1f\x7f-\x9f]/g, ' ');
  return [...flat].length > 60 ? `${[...flat].slice(0, 59).join('')}…` : flat;
}
