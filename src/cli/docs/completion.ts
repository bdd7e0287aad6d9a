import type { Command } from 'commander';
import { collectNodes, type Node, type Shell } from './completion/shared.js';
import { describeProgram } from './tree.js';

export type { Shell };

/** Each shell's generator, loaded only for that shell: `svc completion bash` never loads zsh's or fish's. */
const GENERATORS: Record<Shell, () => Promise<{ render(nodes: Node[], install: string): string }>> = {
  bash: () => import('./completion/bash.js'),
  zsh: () => import('./completion/zsh.js'),
  fish: () => import('./completion/fish.js'),
};

/**
 * A completion script for `shell`, generated from the commander tree. Each
 * script walks the words before the cursor the way commander parses them
 * (an option that takes a value swallows the next word; aliases count as
 * their command) to find the command being typed, then offers its
 * subcommands, or its options and those of its ancestors, or an option's
 * choices or file names. Key ids and profile names come from the hidden
 * `svc __complete`, given the --profile and --base-url typed so far; it
 * prints nothing when it cannot answer fast, so a Tab offline offers nothing.
 */
export async function renderCompletion(program: Command, shell: Shell, install: string): Promise<string> {
  const { render } = await GENERATORS[shell]();
  return render(collectNodes(describeProgram(program)), install);
}
