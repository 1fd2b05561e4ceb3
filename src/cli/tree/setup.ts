/**
 * Setup: the token, the config, checks, shell completion.
 */
import { LIVE_SOURCES } from '../complete-sources.js';
import type { CommandSpec } from './spec.js';

export const SETUP_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'login',
    summary: 'Check the access token with the service and save it for a --profile',
    description:
      "Save the access token for the chosen --profile, from a masked prompt or from stdin. The service is asked first (one authenticated read, as `trade auth status` does): a refused token is not saved (exit 3), and when the service cannot be asked nothing is saved either (exit 4) unless --no-verify. On embedded with no base URL there is nothing to ask, and the token is saved unchecked.",
    options: [
      { flags: '--token-stdin', description: 'read the token from stdin (for scripts)' },
      { flags: '--no-verify', description: 'save the token without asking the service whether it takes it' },
    ],
    examples: [
      'trade login',
      'trade --profile live login --token-stdin < ~/.secrets/trade-token',
      'trade --profile live login --no-verify',
    ],
    run: async (ctx, { options }) => {
      const { runLogin } = await import('../commands/login.js');
      await runLogin(ctx, options);
    },
  },
  {
    name: 'logout',
    summary: "Remove the access token from a --profile",
    description:
      "Remove the chosen --profile's saved token from the config; says so when TRADE_TOKEN still gives one.",
    examples: [
      'trade logout',
      'trade --profile live logout',
    ],
    run: async (ctx, _call) => {
      const { runLogout } = await import('../commands/auth.js');
      await runLogout(ctx);
    },
  },
  {
    name: 'auth',
    summary: 'Show the token in effect and whether the service takes it',
    description:
      'Show the token in effect (masked) and where it comes from, and whether the service takes it.',
    examples: [
      'trade auth status',
      'trade --profile live auth status --json',
    ],
    commands: [
      {
        name: 'status',
        summary: 'The token in effect, where it comes from, and whether the service takes it',
        description:
          "The token in effect, masked, and where it comes from (TRADE_TOKEN or the profile), the backend and base URL, and whether the service takes it: one authenticated read (GetAllPositions), waiting at most 5 seconds; nothing is placed. On embedded, where no token is needed, it is checked over HTTP when a base URL is set (the service it is for), and nothing is sent when none is. Exit 0 when the token is taken (or not needed), 3 when none is set, no URL is set or the service refuses it, 4 when the service cannot be asked.",
        options: [
          { flags: '--json', description: 'print {"profile","backend","baseUrl","wsUrl","token","service"}' },
        ],
        examples: [
          'trade auth status',
          'TRADE_BACKEND=http trade auth status --json',
        ],
        run: async (ctx, { options }) => {
          const { runAuthStatus } = await import('../commands/auth.js');
          await runAuthStatus(ctx, options);
        },
      },
    ],
  },
  {
    name: 'config',
    summary: 'Read and change the config for a --profile',
    description:
      'Read and change the config store (file mode 0600) for the chosen --profile.',
    keysHelp: true,
    examples: [
      'trade config set base-url https://trading.example.com',
      'trade --profile live config set backend http',
      'trade config get account',
      'trade config list --json',
    ],
    commands: [
      {
        name: 'set',
        description:
          'Set a key (the token is set with `trade login`, never on the command line).',
        arguments: [
          { name: '<key>', description: 'base-url, ws-url, backend, account, timeout or webhook-url' },
          { name: '<value>', description: 'the value; validated before it is saved' },
        ],
        examples: [
          'trade config set base-url https://trading.example.com',
          'trade config set account Sim101',
        ],
        run: async (ctx, { args: [key, value] }) => {
          const { runConfigSet } = await import('../commands/config.js');
          await runConfigSet(ctx, key, value);
        },
      },
      {
        name: 'get',
        description:
          'Print the value in effect (flag > environment > config > default); exit 3 when unset.',
        arguments: [
          { name: '<key>', description: 'a config key' },
        ],
        options: [
          { flags: '--show-token', description: 'print the token unmasked' },
          { flags: '--json', description: 'print {"key","value","source"}' },
        ],
        examples: [
          'trade config get base-url',
          'trade config get token --show-token',
        ],
        run: async (ctx, { args: [key], options }) => {
          const { runConfigGet } = await import('../commands/config.js');
          await runConfigGet(ctx, key, options);
        },
      },
      {
        name: 'unset',
        description:
          'Remove a key from the profile.',
        arguments: [
          { name: '<key>', description: 'a config key' },
        ],
        examples: [
          'trade config unset ws-url',
        ],
        run: async (ctx, { args: [key] }) => {
          const { runConfigUnset } = await import('../commands/config.js');
          await runConfigUnset(ctx, key);
        },
      },
      {
        name: 'list',
        description:
          'Show every key in effect, with where its value comes from.',
        options: [
          { flags: '--show-token', description: 'print the token unmasked' },
          { flags: '--json', description: 'print {"profile","path","values"}' },
        ],
        examples: [
          'trade config list',
          'trade --profile live config list --json',
        ],
        run: async (ctx, { options }) => {
          const { runConfigList } = await import('../commands/config.js');
          await runConfigList(ctx, options);
        },
      },
      {
        name: 'path',
        description:
          "Print the config file's path.",
        examples: [
          'trade config path',
        ],
        run: async (ctx, _call) => {
          const { runConfigPath } = await import('../commands/config.js');
          runConfigPath(ctx);
        },
      },
    ],
  },
  {
    name: 'doctor',
    summary: 'Check the set-up: backend, config, data, token, service',
    description:
      'Show the backend that would be used and where that choice comes from, where config and data live, whether a token is set (masked), the embedded store\'s schema and contents, and for http or ws whether the service answers and takes the token (one authenticated read, GetAllPositions, over HTTP or as a WebSocket RPC: nothing is placed). Exit 0 when every check passes, 3 for a config or token problem, 4 when the service is unreachable or its trading platform is not connected, 1 when the store cannot be used.',
    options: [
      { flags: '--json', description: 'print the report as one JSON object' },
    ],
    examples: [
      'trade doctor',
      'trade --profile live doctor',
      'TRADE_BACKEND=ws trade doctor --json',
    ],
    run: async (ctx, { options }) => {
      const { runDoctor } = await import('../commands/doctor.js');
      await runDoctor(ctx, options);
    },
  },
  {
    name: 'completion',
    summary: 'Print a shell completion script',
    description:
      'Print a shell completion script (commands, flags and their values) for bash, zsh or fish.',
    arguments: [
      { name: '<shell>', description: 'bash, zsh or fish' },
    ],
    examples: [
      'trade completion bash > ~/.local/share/bash-completion/completions/trade',
      'source <(trade completion zsh)',
      'trade completion fish > ~/.config/fish/completions/trade.fish',
    ],
    wholeTree: true,
    run: async (ctx, { args: [shell], program }) => {
      const { runCompletion } = await import('../commands/completion.js');
      // The script completes every command's flags: the whole tree, not only this command's.
      const { buildWhole } = await import('../program.js');
      buildWhole(program);
      runCompletion(ctx, shell, program);
    },
  },
  {
    name: '__complete',
    hidden: true,
    description:
      'Print the live values a completion script offers, one a line, from the embedded store and the config; no network.',
    arguments: [
      { name: '<source>', description: LIVE_SOURCES.join(', ') },
    ],
    options: [
      { flags: '--account <name>', description: 'only the order ids of this account' },
    ],
    run: async (ctx, { args: [source], options }) => {
      const { runComplete } = await import('../commands/complete.js');
      runComplete(ctx, source, options);
    },
  },
];
