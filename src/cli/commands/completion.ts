import type { Command } from 'commander';
import type { Session } from '../session/session.js';
import { UsageError } from '../errors/errors.js';
import type { Shell } from '../docs/completion.js';
import type { App } from '../program/program.js';

/** How to load each script; shown when no shell is given, and atop the script. */
const INSTALL: Record<Shell, string> = {
  bash: 'add  eval "$(svc completion bash)"  to ~/.bashrc',
  zsh: 'svc completion zsh > ~/.zfunc/_svc  and put  fpath=(~/.zfunc $fpath)  before compinit in ~/.zshrc',
  fish: 'svc completion fish > ~/.config/fish/completions/svc.fish',
};

export function register(program: Command, app: App): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .argument('[shell]', 'bash, zsh or fish')
    .addHelpText(
      'after',
      '\nThe script completes commands, subcommands and options, and is generated from this version of svc: regenerate it after an upgrade. Key ids and profile names are asked of svc as you type (one quick request with the --profile and --base-url typed so far; nothing is offered when the server does not answer).\n\nExamples:\n  $ eval "$(svc completion bash)"\n  $ svc completion zsh > ~/.zfunc/_svc   # with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc\n  $ svc completion fish > ~/.config/fish/completions/svc.fish',
    )
    // The script describes the whole program, not just this command.
    .action(app.action('nothing', (session: Session, shell: string | undefined) => run(session, program, shell)));
}

export async function run(session: Session, program: Command, shell: string | undefined): Promise<void> {
  if (shell === undefined) {
    const hints = Object.entries(INSTALL).map(([name, how]) => `  ${`${name}:`.padEnd(6)}${how}`);
    throw new UsageError(['Which shell? Usage: svc completion bash|zsh|fish', ...hints]);
  }
  if (!isShell(shell)) {
    throw new UsageError(`Unknown shell '${shell}': svc completes bash, zsh and fish.`);
  }
  // Loaded only here: the generators are no part of an ordinary start-up.
  const { renderCompletion } = await import('../docs/completion.js');
  // A script for the shell to load, made from svc's own command tree: no text from elsewhere is in it.
  const script = await renderCompletion(program, shell, INSTALL[shell]);
  // --json promises one document on stdout (docs/contract.md §C3): the script goes inside it (docs/completion.schema.json).
  if (session.options.json) session.render.json({ shell, script });
  else session.io.stdout.write(script);
}

function isShell(name: string): name is Shell {
  return Object.hasOwn(INSTALL, name);
}
