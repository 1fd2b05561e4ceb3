/**
 * Shell completion scripts, written from the command tree's completion model (completion-model.ts):
 * every command, its flags, which flags take a value and what that value is — one of a set of
 * choices (matched in any case), a file, or a live value the script asks `trade __complete` for on
 * each Tab (accounts, ATM templates, profiles, order ids, instruments). bash and zsh share the
 * tables (their `case` is the same); fish declares the same facts its own way (completion-fish.ts).
 */
import type { Command } from 'commander';
import { fishScript } from './completion-fish.js';
import { type CompletionModel, completionModel, type NodeModel, type Shell, SHELLS, specWords, type ValueSpec } from './completion-model.js';

export { SHELLS, type Shell };

/** Text the scripts put in single quotes: nothing in the tree may need more than that. */
export function quoted(text: string): string {
  if (/['\\]/.test(text)) throw new Error(`Cannot complete '${text}': completion words have no quotes or backslashes`);
  return `'${text}'`;
}

/**
 * The flag and argument rules as `case` branches: "PATH FLAG" → value, "PATH N" → value. A global
 * flag (`--profile`) is one branch for every path, after the commands' own.
 */
function valueBranches(model: CompletionModel): { flags: string[]; args: string[] } {
  const root = model.nodes.find((n) => n.path === '')!;
  const globals = new Map(root.flags.flatMap((f) => (f.value ? f.names.map((name) => [name, specWords(f.value!)] as const) : [])));
  const byValue = new Map<string, string[]>();
  for (const node of model.nodes)
    for (const flag of node.flags)
      for (const name of flag.names) {
        if (!flag.value || globals.get(name) === specWords(flag.value)) continue;
        const words = specWords(flag.value);
        byValue.set(words, [...(byValue.get(words) ?? []), quoted(`${node.path} ${name}`)]);
      }
  const flags = [
    ...[...byValue].map(([words, patterns]) => `    ${patterns.join('|')}) REPLY=${quoted(words)} ;;`),
    ...[...globals].map(([name, words]) => `    *${quoted(` ${name}`)}) REPLY=${quoted(words)} ;;`),
  ];
  const args = model.nodes.flatMap((node) =>
    node.args.map((arg, i) => {
      const pattern = i === node.args.length - 1 && arg.variadic ? `${quoted(`${node.path} `)}*` : quoted(`${node.path} ${i}`);
      return `    ${pattern}) REPLY=${quoted(specWords(arg.value))} ;;`;
    }),
  );
  return { flags, args };
}

function offeredFlags(node: NodeModel): string {
  return node.flags.filter((f) => !f.hidden).flatMap((f) => f.names).join(' ');
}

/** The functions both bash and zsh run: what the tree says, by command path. */
function tables(model: CompletionModel): string {
  const { flags, args } = valueBranches(model);
  const withChildren = model.nodes.filter((n) => n.children.length > 0);
  return `# The subcommands of a command path.
_trade_children() {
  case $1 in
${withChildren.map((n) => `    ${quoted(n.path)}) REPLY=${quoted(n.children.join(' '))} ;;`).join('\n')}
    *) REPLY='' ;;
  esac
}

# The flags offered at a command path.
_trade_flags() {
  case $1 in
${model.nodes.map((n) => `    ${quoted(n.path)}) REPLY=${quoted(offeredFlags(n))} ;;`).join('\n')}
    *) REPLY='' ;;
  esac
}

# What the value of a flag is ("PATH FLAG"): choices WORD..., list WORD... (a comma list), file,
# live SOURCE (trade __complete SOURCE), text; empty when the flag takes no value.
_trade_value_of() {
  case "$1 $2" in
${flags.join('\n')}
    *) REPLY='' ;;
  esac
}

# What the value of a command's Nth argument (from 0) is ("PATH N"), as _trade_value_of says.
_trade_argument() {
  case "$1 $2" in
${args.join('\n')}
    *) REPLY='' ;;
  esac
}`;
}

export function bashScript(program: Command): string {
  return `# bash completion for trade; generated from its command tree by \`trade completion bash\`.
# Install: trade completion bash > ~/.local/share/bash-completion/completions/trade
${tables(completionModel(program))}

# Appends to COMPREPLY the words that start with $1, in any case.
_trade_match() {
  local cur=$1 word restore
  shift
  restore=$(shopt -p nocasematch)
  shopt -s nocasematch
  for word in "$@"; do
    [[ $word == "$cur"* ]] && COMPREPLY+=("$word")
  done
  eval "$restore"
}

# Appends to COMPREPLY the values of a value spec ($1) that complete $2.
_trade_offer() {
  local kind=\${1%% *} words=\${1#* } cur=$2 prefix='' line q start i
  local -a found=()
  case $kind in
    file)
      compopt -o filenames 2>/dev/null
      while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur")
      ;;
    choices) _trade_match "$cur" $words ;;
    list)
      [[ $cur == *,* ]] && prefix=\${cur%,*},
      start=\${#COMPREPLY[@]}
      _trade_match "\${cur##*,}" $words
      for ((i = start; i < \${#COMPREPLY[@]}; i++)); do COMPREPLY[i]=$prefix\${COMPREPLY[i]}; done
      ;;
    live)
      while IFS= read -r line; do
        printf -v q '%q' "$line"
        found+=("$q")
      done < <(trade __complete "$words" "\${_trade_extra[@]}" 2>/dev/null)
      _trade_match "$cur" "\${found[@]}"
      ;;
  esac
}

_trade() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd='' word expect='' n=0 i REPLY children='' spec
  local -a _trade_extra=()
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [[ -n $expect ]]; then
      [[ $word == '=' ]] && continue
      [[ $expect == --account ]] && _trade_extra=(--account "$word")
      expect=''
      continue
    fi
    case $word in
      --account=*) _trade_extra=(--account "\${word#*=}") ;;
      -*=*) ;;
      -*)
        _trade_value_of "$cmd" "$word"
        [[ -n $REPLY ]] && expect=$word
        ;;
      *)
        _trade_children "$cmd"
        if ((n == 0)) && [[ " $REPLY " == *" $word "* ]]; then cmd=\${cmd:+$cmd }$word; else n=$((n + 1)); fi
        ;;
    esac
  done
  if [[ -n $expect ]]; then
    # --flag=VALUE splits at the = (COMP_WORDBREAKS): the word under the cursor is the = itself.
    [[ $cur == '=' ]] && cur=''
    _trade_value_of "$cmd" "$expect"
    _trade_offer "$REPLY" "$cur"
    return 0
  fi
  if [[ $cur == -* ]]; then
    _trade_flags "$cmd"
    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
    return 0
  fi
  if ((n == 0)); then
    _trade_children "$cmd"
    children=$REPLY
    [[ -n $children ]] && COMPREPLY=($(compgen -W "$children" -- "$cur"))
  fi
  _trade_argument "$cmd" "$n"
  spec=$REPLY
  if [[ -n $spec ]]; then
    _trade_offer "$spec" "$cur"
  elif [[ -z $children ]]; then
    _trade_flags "$cmd"
    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
  fi
  return 0
}
complete -F _trade trade
`;
}

export function zshScript(program: Command): string {
  return `#compdef trade
# zsh completion for trade; generated from its command tree by \`trade completion zsh\`.
# Install (in ~/.zshrc, after compinit): source <(trade completion zsh)
${tables(completionModel(program))}

# Offers the values of a value spec ($1); choices match in any case.
_trade_offer() {
  local kind=\${1%% *} list=\${1#* }
  local -a found
  case $kind in
    file) _files ;;
    choices) compadd -M 'm:{a-zA-Z}={A-Za-z}' -- \${=list} ;;
    list)
      compset -P '*,'
      compadd -M 'm:{a-zA-Z}={A-Za-z}' -- \${=list}
      ;;
    live)
      found=(\${(f)"$(trade __complete $list $_trade_extra 2>/dev/null)"})
      compadd -M 'm:{a-zA-Z}={A-Za-z}' -a found
      ;;
  esac
}

_trade() {
  local cur=\${words[CURRENT]} cmd='' word expect='' REPLY children='' spec
  local -i n=0 i
  local -a _trade_extra
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    if [[ -n $expect ]]; then
      [[ $expect == --account ]] && _trade_extra=(--account "$word")
      expect=''
      continue
    fi
    case $word in
      --account=*) _trade_extra=(--account "\${word#*=}") ;;
      -*=*) ;;
      -*)
        _trade_value_of "$cmd" "$word"
        [[ -n $REPLY ]] && expect=$word
        ;;
      *)
        _trade_children "$cmd"
        if (( n == 0 )) && [[ " $REPLY " == *" $word "* ]]; then cmd=\${cmd:+$cmd }$word; else n=$((n + 1)); fi
        ;;
    esac
  done
  if [[ -z $expect && $cur == -*=* ]]; then
    _trade_value_of "$cmd" "\${cur%%=*}"
    if [[ -n $REPLY ]]; then
      compset -P '*='
      _trade_offer "$REPLY"
      return
    fi
  fi
  if [[ -n $expect ]]; then
    _trade_value_of "$cmd" "$expect"
    _trade_offer "$REPLY"
    return
  fi
  if [[ $cur == -* ]]; then
    _trade_flags "$cmd"
    compadd -- \${=REPLY}
    return
  fi
  if (( n == 0 )); then
    _trade_children "$cmd"
    children=$REPLY
    [[ -n $children ]] && compadd -- \${=children}
  fi
  _trade_argument "$cmd" "$n"
  spec=$REPLY
  if [[ -n $spec ]]; then
    _trade_offer "$spec"
  elif [[ -z $children ]]; then
    _trade_flags "$cmd"
    compadd -- \${=REPLY}
  fi
}

if [[ "\${funcstack[1]}" == _trade ]]; then
  _trade "$@"
else
  compdef _trade trade
fi
`;
}

export function completionScript(program: Command, shell: Shell): string {
  return shell === 'bash' ? bashScript(program) : shell === 'zsh' ? zshScript(program) : fishScript(program);
}
