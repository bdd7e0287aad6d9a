import { FORWARDED, flags, header, sq, takesValue, valueKind, valueOptions, type Node } from './shared.js';

export function render(nodes: Node[], install: string): string {
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
    if (kind === 'dynamic') return [`    ${patterns.join('|')}) ${fn}_offer ${opt.dynamicValues} ;;`];
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

  const runners = nodes.filter((node) => node.doc.runsCommand).map((node) => sq(node.key));
  return `${header('bash', root, install)}

# After the '--' of a command that runs one (${runners.join(', ')}), the words from
# index $2 on are a command line of their own: completed as bash-completion
# completes one after sudo, else a command's name, then files.
${fn}_after_dashes() {
  case $1 in
    ${runners.join('|') || "''"})
      if declare -F _command_offset >/dev/null; then _command_offset "$2"
      elif (($2 == COMP_CWORD)); then COMPREPLY=($(compgen -c -- "$cur"))
      else compopt -o default 2>/dev/null; COMPREPLY=()
      fi ;;
  esac
}

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

# Sets COMPREPLY to the words svc lists for $1 (key-ids, profiles) that start
# with $cur, asked with the caller's forwarded options; nothing when svc
# cannot say (offline, no key). Bash has no column for a description, so as
# cobra's bash completion (V2) does: a single match is inserted alone;
# several are listed as "word  (description)", padded to line up and cut to
# $COLUMNS; menu-complete and insert-completions (COMP_TYPE 37, 42) get the
# words alone. A key name that no id starts with, and that one key alone
# has, completes to that key's id: svc takes such a name for its key.
${fn}_offer() {
  local tab=$'\\t' line word desc longest=0 room
  local -a lines=() matched=()
  while IFS= read -r line; do
    [[ -n $line ]] && lines+=("$line")
  done < <(command ${root.name} __complete "$1" --quiet "\${forwarded[@]}" 2>/dev/null)
  for line in "\${lines[@]}"; do
    [[ \${line%%$tab*} == "$cur"* ]] && matched+=("$line")
  done
  if ((\${#matched[@]} == 0)) && [[ $1 == key-ids && -n $cur ]]; then
    for line in "\${lines[@]}"; do
      [[ $line == *$tab* && \${line#*$tab} == "$cur"* ]] && matched+=("$line")
    done
    ((\${#matched[@]} == 1)) || matched=()
  fi
  if ((\${#matched[@]} <= 1)) || [[ $COMP_TYPE == 37 || $COMP_TYPE == 42 ]]; then
    COMPREPLY=("\${matched[@]%%$tab*}")
    return 0
  fi
  for line in "\${matched[@]}"; do
    word=\${line%%$tab*}
    ((\${#word} > longest)) && longest=\${#word}
  done
  COMPREPLY=()
  for line in "\${matched[@]}"; do
    word=\${line%%$tab*}
    if [[ $line == *$tab* ]]; then
      desc=\${line#*$tab}
      room=$((\${COLUMNS:-80} - longest - 4))
      # Lined up when at least 8 characters of description fit so, else each right after its word.
      if ((room > 8)); then printf -v word '%-*s' "$longest" "$word"; else room=$((\${COLUMNS:-80} - \${#word} - 4)); fi
      if ((room > 0)); then
        ((\${#desc} > room)) && desc="\${desc:0:room-1}…"
        word+="  ($desc)"
      fi
    fi
    COMPREPLY+=("$word")
  done
}

${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd=${sq(root.name)} word value_option='' i=1
  local ${fn}_commands ${fn}_aliases ${fn}_options ${fn}_value_options ${fn}_arguments ${fn}_argument_kind
  local -a forwarded=()
  COMPREPLY=()
  while ((i < COMP_CWORD)); do
    word=\${COMP_WORDS[i]}
    case $word in
      --) ${fn}_after_dashes "$cmd" $((i + 1)); return 0 ;;
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
    if [[ -n $${fn}_argument_kind ]]; then ${fn}_offer "$${fn}_argument_kind"; fi
  fi
}

complete -F ${fn} ${root.name}
`;
}
