import { InvalidArgumentError, Option, type Command } from 'commander';
import { KeysFoundError } from '../../errors/scan.js';
import type { App } from '../../program/program.js';
import type { ProfileSession } from '../../session/session.js';
import type { ScanOptions } from './run.js';
import { IGNORE_FILE } from '../../sources/ignore-file.js';
import { DEFAULT_MAX_FILE_SIZE } from '../../sources/places.js';
import { asUnfinished } from '../../views/failure.js';

export function register(program: Command, app: App): void {
  // The scan's code is loaded by the command that runs it, not by every command.
  const action = app.action('credentials', async (session: ProfileSession, paths: string[], opts: ScanOptions) => (await import('./run.js')).run(session, paths, opts));
  program
    .command('scan')
    .description('find leaked keys in files, git history, the index or stdin; say which are live and whose; --revoke ends them')
    .argument('[paths...]', 'files and directories to scan (default: .); - for standard input; with --git or --staged, the repository (default: .)')
    .option('--git', "scan every blob reachable from any of the repository's refs: its whole history")
    .option('--staged', 'scan the lines the index adds, as a pre-commit hook does')
    .addOption(new Option('--verify <how>', 'key: by your key lists, then with the found key itself (touches its last use); own: by your key lists alone').choices(['key', 'own']).default('key'))
    .option('--no-verify', 'check nothing with the server: every key found is "not checked"')
    .option('--revoke', 'revoke the live keys found (asks on a terminal; --yes otherwise), then check each is refused')
    .option('-y, --yes', 'with --revoke: do not ask')
    .addOption(new Option('--format <format>', 'table, json (as --json) or sarif (SARIF 2.1.0)').choices(['table', 'json', 'sarif']))
    .addOption(new Option('--max-file-size <size>', 'skip files and blobs larger than this: bytes, or with K, M or G').default(DEFAULT_MAX_FILE_SIZE, '50M').argParser(size))
    .option('--ignore-file <path>', `fingerprints of keys not to report (default: ${IGNORE_FILE} at the root of what is scanned)`)
    .option('--baseline', 'write the fingerprints of the keys found now to the ignore file, check nothing, exit 0')
    .addHelpText(
      'after',
      `
Finds every sk_ key (also JSON-escaped as \\u005f or percent-encoded as %5F; never one split across lines). Links are not followed; .git directories are left to --git; FIFOs, devices and files over --max-file-size are skipped and counted. A line with "svc-scan: ignore" on it is not reported, nor a key whose fingerprint is in the ignore file.

Keys are checked against the profile's server only (or --base-url), never an address found in the text. The secret is never printed: keys are shown by their hints.

Exit 0 when no key is found, 1 when a live key is found (and, with --revoke, one is still live), 7 when keys are found and none is live, 8 when keys are found, none is known live and some could not be checked (--no-verify, --staged hooks), 6 when the scan could not finish; 2, 3 and 130 as for every command.

Examples:
  $ svc scan
  $ svc scan --git --format sarif > svc-scan.sarif
  $ svc scan --staged --no-verify          # a pre-commit hook
  $ some-ci-step 2>&1 | tee log.txt; svc scan - < log.txt
  $ svc scan config/ --revoke --yes`,
    )
    .action(async (...args: unknown[]) => {
      try {
        await action(...args);
      } catch (error) {
        throw unfinished(error, (args[args.length - 1] as Command).optsWithGlobals().verbose === true);
      }
    });
}

/** "50M", "2G", "1048576". */
function size(text: string): number {
  const match = /^(\d+)\s*([kmg]?)i?b?$/i.exec(text.trim());
  if (match === null) throw new InvalidArgumentError('expected bytes, or a number with K, M or G: 50M.');
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(match[1]) * scale;
}

/** What is exit 1 elsewhere is 6 here, so that 1 means only "a live key was found". */
function unfinished(error: unknown, verbose: boolean): unknown {
  return error instanceof KeysFoundError ? error : asUnfinished(error, verbose, 'scan');
}

