import type { Command } from 'commander';
import type { Outcome } from '../program/after-command.js';
import { askKey, confirmReplacing, logInWith } from '../dialogs/login.js';
import { UsageError } from '../errors/errors.js';
import type { App } from '../program/program.js';
import { readStdin } from '../dialogs/read-text.js';
import { noteNewProfile } from '../dialogs/meant-profile.js';
import { announceProfileFile, type ProfileSession } from '../session/session.js';

export interface LoginOptions {
  withKey?: boolean;
  yes?: boolean;
  /** True with --keyring, false with --no-keyring; unset: where the profile keeps its key now. */
  keyring?: boolean;
}

export function register(program: Command, app: App): void {
  program
    .command('login')
    .description('check an API key against the server and save it to the profile')
    .option('--with-key', 'read the key from stdin instead of prompting')
    .option('--keyring', "keep the key in the OS keyring (Secret Service, Keychain, Credential Manager); the profile records only the entry")
    .option('--no-keyring', 'keep the key in the config file (the default for a new profile)')
    .option('-y, --yes', "replace the profile's key or server without asking")
    .addHelpText(
      'after',
      '\nThe key is never taken as an argument: it would show in `ps` and in shell history. Without --keyring or --no-keyring the key goes where the profile keeps its key now: the config file, unless an earlier --keyring chose the OS keyring. A profile kept in the keyring never falls back to the file: a locked or missing keyring is exit 3.\n\nA profile that already holds a key, or points at another server, is not changed unasked: on a terminal svc names its key and server and asks first (No or Ctrl-C leaves it as it was; --yes answers yes). Where nobody can be asked (a pipe, CI, --no-input) the login goes on and says on stderr what it replaced, and --json has it as `replaced`.\n\nExamples:\n  $ svc login\n  $ svc login --keyring\n  $ svc login --with-key < key.txt\n  $ printenv NEW_KEY | svc login --with-key --profile ci',
    )
    .action(app.action('change', run));
}

/** Nothing on stdin is no malformed key: it is a key that was never passed, and says how to pass one. */
function readKeyFromStdin(text: string): string {
  const key = text.trim();
  if (key === '') {
    throw new UsageError('stdin was empty: --with-key reads the key from stdin. Pipe it in (`printenv KEY | svc login --with-key`, `svc login --with-key < key.txt`), or run `svc login` on a terminal to be asked for it.');
  }
  return key;
}

/** Stdin to its end; typed on a terminal, where it shows, only once the person is told so. */
function readKeyText(session: ProfileSession): Promise<string> {
  return readStdin(session, {
    source: 'stdin',
    prompt: 'Reading the key from the terminal, where it shows as you type: paste it, then press Ctrl-D on a line of its own (Ctrl-C cancels). `svc login` alone asks for it without showing it.',
    otherwise: 'Pipe the key in (`printenv KEY | svc login --with-key`).',
  });
}

export async function run(session: ProfileSession, opts: LoginOptions): Promise<Outcome> {
  announceProfileFile(session);
  noteNewProfile(session);
  await confirmReplacing(session, opts.yes === true);
  const apiKey = opts.withKey ? readKeyFromStdin(await readKeyText(session)) : await askKey(session);
  const list = await logInWith(session, apiKey, opts.keyring === undefined ? undefined : opts.keyring ? 'keyring' : 'file');
  return { list, keyInUse: { apiKey, source: 'profile' } };
}
