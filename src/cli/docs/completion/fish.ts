import { FORWARDED, flags, header, sq, summary, takesValue, valueKind, type Node } from './shared.js';

/** Single-quoted for fish, where only \\ and ' are special inside. */
function fq(s: string): string {
  return `'${s.replace(/[\\']/g, '\\$&')}'`;
}

/**
 * A value for `complete -a`, which fish expands when it completes: each word
 * is escaped, and an empty description after a tab keeps fish from showing
 * the option's description beside every choice.
 */
function fishCandidates(words: string[]): string {
  return fq(words.map((w) => `${w.replace(/[^\w.@%+=:,/-]/g, '\\$&')}\\t`).join(' '));
}

export function render(nodes: Node[], install: string): string {
  const root = nodes[0]!.doc;
  const fn = `__${root.name}`;
  const childCases = nodes
    .filter((node) => node.doc.commands.length > 0)
    .map((node) =>
      [
        `        case ${fq(node.key)}`,
        '            switch $argv[2]',
        ...node.doc.commands.flatMap((sub) => [
          `                case ${[sub.name, ...sub.aliases].map(fq).join(' ')}`,
          `                    echo ${fq(sub.path.join(' '))}`,
        ]),
        "                case '*'",
        '                    return 1',
        '            end',
      ].join('\n'),
    );
  const valueOptionCases = nodes
    .filter((node) => node.options.some(takesValue))
    .flatMap((node) => [
      `        case ${fq(node.key)}`,
      `            printf '%s\\n' ${node.options.filter(takesValue).flatMap(flags).join(' ')}`,
    ]);

  const completions: string[] = [];
  // Past a '--' the words are a command line of svc run's, or nothing of svc's: no svc word is offered there.
  const mine = `not ${fn}_past_dashes`;
  for (const node of nodes) {
    const { doc } = node;
    const at = `-n ${fq(`${fn}_at ${sq(node.key)}; and ${mine}`)}`;
    // Aliases only when no name fits, so that l<TAB> completes list instead of offering list and ls.
    const names = doc.commands.map((sub) => sq(sub.name)).join(' ');
    const aliasAt = `-n ${fq(`${fn}_at ${sq(node.key)}; and not ${fn}_fits ${names}; and ${mine}`)}`;
    for (const sub of doc.commands) {
      completions.push(`complete -c ${root.name} ${at} -a ${fq(sub.name)} -d ${fq(summary(sub.description))}`);
      for (const alias of sub.aliases) {
        completions.push(`complete -c ${root.name} ${aliasAt} -a ${fq(alias)} -d ${fq(`alias of ${sub.name}`)}`);
      }
    }
    if (doc.argumentValues.length > 0) {
      completions.push(`complete -c ${root.name} ${at} -a ${fishCandidates(doc.argumentValues)}`);
    }
    if (doc.dynamicArguments !== undefined) {
      // -k: keys come newest first from the API; fish would otherwise sort them.
      completions.push(`complete -c ${root.name} ${at} -k -a ${fq(`(${fn}_dynamic ${doc.dynamicArguments})`)}`);
    }
    // The program's options, help included, apply everywhere; a command's own help is the same -h.
    const within = ` -n ${fq(doc === root ? mine : `${fn}_within ${sq(node.key)}; and ${mine}`)}`;
    for (const opt of doc.options.filter((o) => doc === root || !o.isHelp)) {
      const names = [opt.short && `-s ${opt.short.slice(1)}`, opt.long && `-l ${opt.long.slice(2)}`].filter(Boolean).join(' ');
      const kind = takesValue(opt) ? valueKind(opt) : undefined;
      const value =
        kind === 'choices'
          ? ` -x -a ${fishCandidates(opt.choices)}`
          : kind === 'dynamic'
            ? ` -x -k -a ${fq(`(${fn}_dynamic ${opt.dynamicValues})`)}`
            : kind === 'file'
              ? ' -r -F'
              : kind === 'other'
                ? ' -x'
                : '';
      completions.push(`complete -c ${root.name}${within} ${names}${value} -d ${fq(summary(opt.description))}`);
    }
    if (doc.runsCommand) {
      completions.push(`complete -c ${root.name} -n ${fq(`${fn}_within ${sq(node.key)}; and ${fn}_past_dashes`)} -a ${fq(`(${fn}_run_line)`)}`);
    }
  }

  return `${header('fish', root, install)}

# The subcommand that word $argv[2] names below command $argv[1].
function ${fn}_child
    switch $argv[1]
${childCases.join('\n')}
        case '*'
            return 1
    end
end

# The options of command $argv[1] that take a value, one a line.
function ${fn}_value_options
    switch $argv[1]
${valueOptionCases.join('\n')}
    end
end

# The command named by the words before the cursor, e.g. '${root.name} keys list'.
function ${fn}_command
    set -l tokens (commandline -opc)
    set -l cmd ${fq(root.name)}
    set -l i 2
    while test $i -le (count $tokens)
        set -l word $tokens[$i]
        switch $word
            case '--'
                break
            case '-*'
                # An option that takes a value swallows the next word.
                if contains -- $word (${fn}_value_options $cmd)
                    set i (math $i + 1)
                end
            case '*'
                set -l child (${fn}_child $cmd $word)
                and set cmd $child
        end
        set i (math $i + 1)
    end
    echo $cmd
end

function ${fn}_at
    test (${fn}_command) = $argv[1]
end

# Whether the word being typed begins one of the names $argv.
function ${fn}_fits
    set -l typed (commandline -ct)
    test -z "$typed"; and return 0
    for name in $argv
        test (string sub -l (string length -- $typed) -- $name) = $typed; and return 0
    end
    return 1
end

# The words svc lists for $argv[1] (key-ids, profiles), each with a tab and
# its description, asked with the ${FORWARDED.join(' and ')} typed so far;
# nothing when it cannot say (offline, no key).
function ${fn}_dynamic
    set -l tokens (commandline -opc)
    set -l forwarded
    for i in (seq 2 (math (count $tokens) - 1))
        if contains -- $tokens[$i] ${FORWARDED.join(' ')}
            set -a forwarded $tokens[$i] $tokens[(math $i + 1)]
        end
    end
    command ${root.name} __complete $argv[1] --quiet $forwarded 2>/dev/null
end

function ${fn}_within
    set -l cmd (${fn}_command)
    test "$cmd" = $argv[1]; or string match -q -- "$argv[1] *" "$cmd"
end

# Whether the words before the cursor hold a '--'.
function ${fn}_past_dashes
    contains -- -- (commandline -opc)
end

# The words after the '--' of a command that runs one: a command line of
# its own, completed as fish completes any (its commands, then theirs).
function ${fn}_run_line
    __fish_complete_subcommand --fcs-skip=(contains -i -- -- (commandline -opc))
end

complete -c ${root.name} -f
${completions.join('\n')}
`;
}
