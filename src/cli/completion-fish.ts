/**
 * The fish completion script, from the same completion model as bash's and zsh's: fish declares
 * each flag with `complete -l`, so it knows by itself which flags take a value; where a command
 * path is, and how many arguments came before the cursor, a function works out from the tree.
 */
import type { Command } from 'commander';
import { type ArgumentModel, completionModel, type FlagModel, type NodeModel, type ValueSpec } from './completion-model.js';

/** A fish single-quoted string. */
function fishQuoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The `complete` arguments offering a value. */
function valueArgs(spec: ValueSpec): string {
  switch (spec.kind) {
    case 'choices':
      return spec.list ? `-x -a ${fishQuoted(`(__trade_list ${spec.values.join(' ')})`)}` : `-x -a ${fishQuoted(spec.values.join(' '))}`;
    case 'file':
      return '-r -F';
    case 'live':
      return `-x -a ${fishQuoted(`(__trade_live ${spec.source})`)}`;
    case 'text':
      return '-x';
  }
}

function flagLine(condition: string | undefined, flag: FlagModel): string {
  const parts = ['complete -c trade'];
  if (condition) parts.push(`-n ${fishQuoted(condition)}`);
  if (flag.long) parts.push(`-l ${flag.long.slice(2)}`);
  if (flag.short) parts.push(`-s ${flag.short.slice(1)}`);
  if (flag.value) parts.push(valueArgs(flag.value));
  parts.push(`-d ${fishQuoted(flag.description)}`);
  return parts.join(' ');
}

function argumentLine(node: NodeModel, arg: ArgumentModel, index: number): string | undefined {
  if (arg.value.kind === 'text') return undefined;
  const variadic = arg.variadic && index === node.args.length - 1 ? ' variadic' : '';
  const condition = `__trade_arg ${fishQuoted(node.path)} ${index}${variadic}`;
  return `complete -c trade -n ${fishQuoted(condition)} ${valueArgs(arg.value)}`;
}

export function fishScript(program: Command): string {
  const { nodes } = completionModel(program);
  const root = nodes.find((n) => n.path === '')!;
  const globalNames = new Set(root.flags.filter((f) => f.long !== '--version').map((f) => f.long));
  const lines: string[] = [];
  for (const node of nodes) {
    for (const child of node.children) {
      const summary = nodes.find((n) => n.path === (node.path ? `${node.path} ${child}` : child))!.summary;
      lines.push(`complete -c trade -n ${fishQuoted(`__trade_at ${fishQuoted(node.path)}`)} -a ${child} -d ${fishQuoted(summary)}`);
    }
    for (const flag of node.flags) {
      if (flag.hidden || (node.path !== '' && globalNames.has(flag.long))) continue;
      lines.push(flagLine(node.path === '' && flag.long !== '--version' ? undefined : `__trade_in ${fishQuoted(node.path)}`, flag));
    }
    node.args.forEach((arg, i) => {
      const line = argumentLine(node, arg, i);
      if (line) lines.push(line);
    });
  }
  const valueFlags = nodes.flatMap((n) => n.flags.flatMap((f) => (f.value ? f.names.map((name) => fishQuoted(`${n.path} ${name}`)) : [])));
  const globalValueFlags = root.flags.flatMap((f) => (f.value ? f.names.map((name) => fishQuoted(`* ${name}`)) : []));
  return `# fish completion for trade; generated from its command tree by \`trade completion fish\`.
# Install: trade completion fish > ~/.config/fish/completions/trade.fish
complete -c trade -f

# The subcommands of a command path, one a line.
function __trade_children
    switch $argv[1]
${nodes
  .filter((n) => n.children.length > 0)
  .map((n) => `        case ${fishQuoted(n.path)}\n            printf '%s\\n' ${n.children.join(' ')}`)
  .join('\n')}
    end
end

# Whether a flag takes a value at a command path ("PATH FLAG").
function __trade_takes_value
    switch "$argv[1] $argv[2]"
        case ${[...valueFlags, ...globalValueFlags].join(' ')}
            return 0
    end
    return 1
end

# The command path, the count of arguments and the --account given before the cursor, a line each.
function __trade_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd ''
    set -l n 0
    set -l account ''
    set -l expect ''
    for word in $tokens
        if test -n "$expect"
            test "$expect" = --account; and set account $word
            set expect ''
            continue
        end
        switch $word
            case '--account=*'
                set account (string replace -- '--account=' '' $word)
            case '-*=*'
            case '-*'
                __trade_takes_value "$cmd" $word; and set expect $word
            case '*'
                if test $n -eq 0; and contains -- $word (__trade_children "$cmd")
                    set cmd (string trim -- "$cmd $word")
                else
                    set n (math $n + 1)
                end
        end
    end
    printf '%s\\n' "$cmd" $n "$account"
end

# At this command path, before any argument: its subcommands.
function __trade_at
    set -l state (__trade_state)
    test "$state[1]" = "$argv[1]"; and test "$state[2]" -eq 0
end

# At this command path: its flags.
function __trade_in
    set -l state (__trade_state)
    test "$state[1]" = "$argv[1]"
end

# At this command path's Nth argument (from 0); "variadic": or any after it.
function __trade_arg
    set -l state (__trade_state)
    test "$state[1]" = "$argv[1]"; or return 1
    if set -q argv[3]
        test "$state[2]" -ge $argv[2]
    else
        test "$state[2]" -eq $argv[2]
    end
end

# Live values (accounts, ATM templates, profiles, order ids, instruments) from trade __complete.
function __trade_live
    set -l state (__trade_state)
    set -l extra
    test -n "$state[3]"; and set extra --account $state[3]
    trade __complete $argv[1] $extra 2>/dev/null
end

# A comma list: the choices after what the current token already lists.
function __trade_list
    set -l token (commandline -ct)
    set -l prefix (string match -r '^.*,' -- $token)
    printf "$prefix%s\\n" $argv
end

${lines.join('\n')}
`;
}
