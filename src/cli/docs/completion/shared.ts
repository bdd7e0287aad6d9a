import type { CommandDoc, OptionDoc } from '../tree.js';

export type Shell = 'bash' | 'zsh' | 'fish';

export interface Node {
  doc: CommandDoc;
  /** The words naming it, as the scripts compare them: 'svc keys list'. */
  key: string;
  /** Its own options and its ancestors': commander accepts a program option after a subcommand. */
  options: OptionDoc[];
}

export function collectNodes(root: CommandDoc): Node[] {
  const nodes: Node[] = [];
  const visit = (doc: CommandDoc, inherited: OptionDoc[]) => {
    const own = new Set(doc.options.flatMap(flags));
    const kept = inherited.filter((o) => !flags(o).some((f) => own.has(f)));
    nodes.push({ doc, key: doc.path.join(' '), options: [...doc.options, ...kept] });
    // Each command has its own -h, --help; only the other options carry down.
    for (const sub of doc.commands) visit(sub, [...doc.options.filter((o) => !o.isHelp), ...kept]);
  };
  visit(root, []);
  return nodes;
}

export function flags(opt: OptionDoc): string[] {
  return [opt.short, opt.long].filter((f): f is string => f !== undefined);
}

export function takesValue(opt: OptionDoc): boolean {
  return opt.valueName !== undefined;
}

/** What an option's value completes to: its choices, what `svc __complete` lists, file names, or nothing to offer. */
export function valueKind(opt: OptionDoc): 'choices' | 'dynamic' | 'file' | 'other' {
  if (opt.choices.length > 0) return 'choices';
  if (opt.dynamicValues !== undefined) return 'dynamic';
  return opt.valueName === 'file' ? 'file' : 'other';
}

/**
 * The options that take a value, each with case patterns matching
 * "$command $option" wherever it applies: at its command and below. The
 * deepest commands come first, so that a subcommand's own option wins.
 */
export function valueOptions(nodes: Node[]): { patterns: string[]; opt: OptionDoc }[] {
  return [...nodes]
    .sort((a, b) => b.doc.path.length - a.doc.path.length)
    .flatMap((node) =>
      node.doc.options.filter(takesValue).map((opt) => ({
        patterns: flags(opt).flatMap((f) => [sq(`${node.key} ${f}`), `${sq(`${node.key} `)}*${sq(` ${f}`)}`]),
        opt,
      })),
    );
}

/** The options typed before the cursor that `svc __complete` is given too: they say whose keys to list. */
export const FORWARDED = ['--profile', '--base-url'];

export function summary(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function header(shell: Shell, root: CommandDoc, install: string): string {
  return [
    `# ${shell} completion for ${root.name}, generated from its command tree by \`${root.name} completion ${shell}\`;`,
    '# regenerate it after an upgrade.',
    `# Install: ${install}`,
  ].join('\n');
}

/** Single-quoted for bash and zsh. */
export function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
