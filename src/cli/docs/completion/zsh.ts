import { FORWARDED, flags, header, sq, summary, takesValue, valueKind, valueOptions, type Node } from './shared.js';

export function render(nodes: Node[], install: string): string {
  const root = nodes[0]!.doc;
  const fn = `_${root.name}`;
  // _describe takes 'word:description'; a colon inside the word needs a backslash.
  const described = (word: string, description: string) => sq(`${word.replace(/:/g, '\\:')}:${summary(description)}`);
  const array = (items: string[]) => `(${items.join(' ')})`;
  const runners = nodes.filter((node) => node.doc.runsCommand).map((node) => sq(node.key));
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

# After the '--' (word $2) of a command that runs one (${runners.join(', ')}), the
# words after it are a command line of their own, completed as zsh completes
# one after sudo.
${fn}_after_dashes() {
  case $1 in
    (${runners.join('|') || "''"})
      shift $2 words
      (( CURRENT -= $2 ))
      _normal ;;
    (*) return 1 ;;
  esac
}

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
      (--) ${fn}_after_dashes $cmd $i; return ;;
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
