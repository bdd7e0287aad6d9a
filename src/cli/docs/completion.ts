import type { Command } from 'commander';
import { describeProgram, type CommandDoc, type OptionDoc } from './tree.js';

export type Shell = 'bash' | 'zsh' | 'fish';

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
export function renderCompletion(program: Command, shell: Shell, install: string): string {
  const nodes = collectNodes(describeProgram(program));
  return { bash, zsh, fish }[shell](nodes, install);
}

interface Node {
  doc: CommandDoc;
  /** The words naming it, as the scripts compare them: 'svc keys list'. */
  key: string;
  /** Its own options and its ancestors': commander accepts a program option after a subcommand. */
  options: OptionDoc[];
}

function collectNodes(root: CommandDoc): Node[] {
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

function flags(opt: OptionDoc): string[] {
  return [opt.short, opt.long].filter((f): f is string => f !== undefined);
}

function takesValue(opt: OptionDoc): boolean {
  return opt.valueName !== undefined;
}

/** What an option's value completes to: its choices, what `svc __complete` lists, file names, or nothing to offer. */
function valueKind(opt: OptionDoc): 'choices' | 'dynamic' | 'file' | 'other' {
  if (opt.choices.length > 0) return 'choices';
  if (opt.dynamicValues !== undefined) return 'dynamic';
  return opt.valueName === 'file' ? 'file' : 'other';
}

/**
 * The options that take a value, each with case patterns matching
 * "$command $option" wherever it applies: at its command and below. The
 * deepest commands come first, so that a subcommand's own option wins.
 */
function valueOptions(nodes: Node[]): { patterns: string[]; opt: OptionDoc }[] {
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
const FORWARDED = ['--profile', '--base-url'];

function summary(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function header(shell: Shell, root: CommandDoc, install: string): string {
  return [
    `# ${shell} completion for ${root.name}, generated from its command tree by \`${root.name} completion ${shell}\`;`,
    '# regenerate it after an upgrade.',
    `# Install: ${install}`,
  ].join('\n');
}

/** Single-quoted for bash and zsh. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function bash(nodes: Node[], install: string): string {
  const root = nodes[0]!.doc;
  const fn = `_${root.name}`;
  const words = (list: string[]) => sq(list.join(' '));
  const nodeCases = nodes.map((node) => {
    const { doc } = node;
    const subs = doc.commands;
    return [
      `    ${sq(node.key)})`,
      `      ${fn}_commands=${words(subs.map((s) => s.name))}`,
      `      ${fn}_aliases=${words(subs.flatMap((s) => s.aliases))}`,
      `      ${fn}_options=${words(node.options.flatMap(flags))}`,
      `      ${fn}_value_options=${words(node.options.filter(takesValue).flatMap(flags))}`,
      `      ${fn}_arguments=${words(doc.argumentValues)}`,
      `      ${fn}_argument_kind=${sq(doc.dynamicArguments ?? '')}`,
      '      ;;',
    ].join('\n');
  });
  const childCases = nodes
    .filter((node) => node.doc.commands.length > 0)
    .map((node) =>
      [
        `    ${sq(node.key)})`,
        '      case $2 in',
        ...node.doc.commands.map((sub) => `        ${[sub.name, ...sub.aliases].map(sq).join('|')}) cmd=${sq(sub.path.join(' '))} ;;`),
        '        *) return 1 ;;',
        '      esac ;;',
      ].join('\n'),
    );
  const valueCases = valueOptions(nodes).flatMap(({ patterns, opt }) => {
    const kind = valueKind(opt);
    if (kind === 'choices') return [`    ${patterns.join('|')}) COMPREPLY=($(compgen -W ${sq(opt.choices.join(' '))} -- "$cur")) ;;`];
    if (kind === 'dynamic') return [`    ${patterns.join('|')}) COMPREPLY=($(compgen -W "$(${fn}_dynamic ${opt.dynamicValues})" -- "$cur")) ;;`];
    if (kind === 'file') {
      return [
        `    ${patterns.join('|')})`,
        // compopt is bash 4; without it names still complete, only without the trailing slash on directories.
        '      compopt -o filenames 2>/dev/null',
        "      local IFS=$'\\n'",
        '      COMPREPLY=($(compgen -f -- "$cur")) ;;',
      ];
    }
    return [];
  });

  return `${header('bash', root, install)}

# Sets the caller's ${fn}_* variables to what the command named $1 offers.
${fn}_node() {
  case $1 in
${nodeCases.join('\n')}
  esac
}

# Sets the caller's cmd to the subcommand that word $2 names below command $1.
${fn}_child() {
  case $1 in
${childCases.join('\n')}
    *) return 1 ;;
  esac
}

# Sets COMPREPLY to the values of option $2 of command $1 that start with $cur.
${fn}_option_value() {
  case "$1 $2" in
${valueCases.join('\n')}
  esac
}

# The words svc lists for $1 (key-ids, profiles), asked with the caller's
# forwarded options; nothing when it cannot say (offline, no key).
${fn}_dynamic() {
  local line
  while IFS= read -r line; do
    printf '%s\n' "\${line%%$'\t'*}"
  done < <(command ${root.name} __complete "$1" --quiet "\${forwarded[@]}" 2>/dev/null)
}

${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=${sq(root.name)} word value_option='' i=1
  local ${fn}_commands ${fn}_aliases ${fn}_options ${fn}_value_options ${fn}_arguments ${fn}_argument_kind
  local -a forwarded=()
  COMPREPLY=()
  while ((i < COMP_CWORD)); do
    word=\${COMP_WORDS[i]}
    case $word in
      --) return 0 ;;
      -*)
        ${fn}_node "$cmd"
        if [[ " $${fn}_value_options " == *" $word "* ]]; then
          # The value is the next word, or the one after an '=' that bash split off.
          if ((++i < COMP_CWORD)) && [[ \${COMP_WORDS[i]} == = ]]; then ((++i)); fi
          if ((i == COMP_CWORD)); then value_option=$word; break; fi
          case $word in ${FORWARDED.join('|')}) forwarded+=("$word" "\${COMP_WORDS[i]}") ;; esac
        fi ;;
      *) ${fn}_child "$cmd" "$word" ;;
    esac
    ((++i))
  done
  if [[ -n $value_option ]]; then
    [[ $cur == = ]] && cur=''
    ${fn}_option_value "$cmd" "$value_option"
    return 0
  fi
  ${fn}_node "$cmd"
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$${fn}_options" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$${fn}_commands $${fn}_arguments" -- "$cur"))
    # Aliases only when no name fits, so that l<TAB> completes list instead of offering list and ls.
    ((\${#COMPREPLY[@]})) || COMPREPLY=($(compgen -W "$${fn}_aliases" -- "$cur"))
    if [[ -n $${fn}_argument_kind ]]; then COMPREPLY=($(compgen -W "$(${fn}_dynamic "$${fn}_argument_kind")" -- "$cur")); fi
  fi
}

complete -F ${fn} ${root.name}
`;
}

function zsh(nodes: Node[], install: string): string {
  const root = nodes[0]!.doc;
  const fn = `_${root.name}`;
  // _describe takes 'word:description'; a colon inside the word needs a backslash.
  const described = (word: string, description: string) => sq(`${word.replace(/:/g, '\\:')}:${summary(description)}`);
  const array = (items: string[]) => `(${items.join(' ')})`;
  const nodeCases = nodes.map((node) => {
    const subs = node.doc.commands;
    return [
      `    (${sq(node.key)})`,
      `      ${fn}_commands=${array(subs.map((s) => described(s.name, s.description)))}`,
      `      ${fn}_aliases=${array(subs.flatMap((s) => s.aliases.map((a) => described(a, `alias of ${s.name}`))))}`,
      `      ${fn}_options=${array(node.options.flatMap((o) => flags(o).map((f) => described(f, o.description))))}`,
      `      ${fn}_value_options=${array(node.options.filter(takesValue).flatMap(flags).map(sq))}`,
      `      ${fn}_arguments=${array(node.doc.argumentValues.map(sq))}`,
      `      ${fn}_argument_kind=${sq(node.doc.dynamicArguments ?? '')}`,
      '      ;;',
    ].join('\n');
  });
  const childCases = nodes
    .filter((node) => node.doc.commands.length > 0)
    .map((node) =>
      [
        `    (${sq(node.key)})`,
        '      case $2 in',
        ...node.doc.commands.map((sub) => `        (${[sub.name, ...sub.aliases].map(sq).join('|')}) cmd=${sq(sub.path.join(' '))} ;;`),
        '        (*) return 1 ;;',
        '      esac ;;',
      ].join('\n'),
    );
  const valueCases = valueOptions(nodes).map(({ patterns, opt }) => {
    const kind = valueKind(opt);
    const action =
      kind === 'choices'
        ? `compadd -- ${opt.choices.map(sq).join(' ')}`
        : kind === 'dynamic'
          ? `${fn}_dynamic ${opt.dynamicValues}`
          : kind === 'file'
          ? '_files'
          : `_message -e values ${sq(opt.valueName!)}`;
    return `    (${patterns.join('|')}) ${action} ;;`;
  });

  return `#compdef ${root.name}
${header('zsh', root, install)}

# Sets the caller's ${fn}_* arrays to what the command named $1 offers.
${fn}_node() {
  case $1 in
${nodeCases.join('\n')}
  esac
}

# Sets the caller's cmd to the subcommand that word $2 names below command $1.
${fn}_child() {
  case $1 in
${childCases.join('\n')}
    (*) return 1 ;;
  esac
}

# Completes the value of option $2 of command $1.
${fn}_option_value() {
  case "$1 $2" in
${valueCases.join('\n')}
  esac
}

# Offers the words svc lists for $1 (key-ids, profiles) with their
# descriptions, asked with the caller's forwarded options; nothing when it
# cannot say (offline, no key).
${fn}_dynamic() {
  local line
  local -a found
  for line in \${(f)"$(command ${root.name} __complete $1 --quiet $forwarded 2>/dev/null)"}; do
    found+=("\${\${line%%$'\t'*}//:/\\:}:\${line#*$'\t'}")
  done
  _describe -t $1 \${1//-/ } found
}

${fn}() {
  local cmd=${sq(root.name)} word value_option='' ${fn}_argument_kind i=2
  local -a ${fn}_commands ${fn}_aliases ${fn}_options ${fn}_value_options ${fn}_arguments forwarded
  while (( i < CURRENT )); do
    word=$words[i]
    case $word in
      (--) return 1 ;;
      (-*)
        ${fn}_node $cmd
        if (( $${fn}_value_options[(Ie)$word] )); then
          (( ++i ))
          if (( i == CURRENT )); then value_option=$word; break; fi
          case $word in (${FORWARDED.join('|')}) forwarded+=($word $words[i]) ;; esac
        fi ;;
      (*) ${fn}_child $cmd $word ;;
    esac
    (( ++i ))
  done
  if [[ -z $value_option && $PREFIX == -*=* ]]; then
    value_option=\${PREFIX%%=*}
    compset -P '*='
  fi
  if [[ -n $value_option ]]; then
    ${fn}_option_value $cmd $value_option
    return
  fi
  ${fn}_node $cmd
  if [[ $PREFIX == -* ]]; then
    _describe -t options option ${fn}_options
  else
    # Aliases only when no name fits, so that l<TAB> completes list instead of offering list and ls.
    _describe -t commands command ${fn}_commands ||
      _describe -t aliases alias ${fn}_aliases ||
      compadd -a ${fn}_arguments
    [[ -n $${fn}_argument_kind ]] && ${fn}_dynamic $${fn}_argument_kind
  fi
}

# Autoloaded from $fpath this file is the body of ${fn}; sourced, it registers it.
if [[ $funcstack[1] == ${fn} ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${root.name}
fi
`;
}

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

function fish(nodes: Node[], install: string): string {
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
  for (const node of nodes) {
    const { doc } = node;
    const at = `-n ${fq(`${fn}_at ${sq(node.key)}`)}`;
    // Aliases only when no name fits, so that l<TAB> completes list instead of offering list and ls.
    const names = doc.commands.map((sub) => sq(sub.name)).join(' ');
    const aliasAt = `-n ${fq(`${fn}_at ${sq(node.key)}; and not ${fn}_fits ${names}`)}`;
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
    const within = doc === root ? '' : ` -n ${fq(`${fn}_within ${sq(node.key)}`)}`;
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

complete -c ${root.name} -f
${completions.join('\n')}
`;
}
