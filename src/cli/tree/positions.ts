/**
 * Positions and account: what is open, closing it, the money and the fills, the report.
 */
import type { CommandSpec } from './spec.js';

export const POSITION_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'positions',
    summary: 'List open positions',
    description:
      "List positions (the service's GetPositions for one account, GetAllPositions for every account): the side (Long, Short), the size, the average price, the last price and the unrealized P&L.",
    options: [
      { flags: '--account <name>', description: 'only this account (default: TRADE_ACCOUNT or the config, said on stderr; none: every account)' },
      { flags: '--all-accounts', description: 'every account, whatever the default account' },
      { flags: '--instrument <instrument>', description: 'only this instrument (any form: ES 09-25, ES, ES1!, ESU5)' },
      { flags: '--all', description: 'include flat positions (instruments traded and closed)' },
      { flags: '--include-flat', description: 'the same as --all (the service calls it includeFlat)' },
      { flags: '--json', description: "print the service's body: {\"positions\":[...],\"count\":N,\"success\":true}" },
    ],
    examples: [
      'trade positions',
      'trade positions --account Sim101 --json',
      'trade positions --all',
      'trade positions --all-accounts',
    ],
    run: async (ctx, { options }) => {
      const { runPositions } = await import('../commands/positions.js');
      await runPositions(ctx, options);
    },
  },
  {
    name: 'position',
    summary: 'Show the position in one instrument',
    description:
      'Show the position of an account in one instrument (GetPosition): Long, Short or Flat, the size, the average price, the last price and the unrealized P&L. A flat instrument is not an error.',
    arguments: [
      { name: '<instrument>', description: "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)" },
    ],
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config)' },
      { flags: '--json', description: "print the service's body (the Position object)" },
    ],
    examples: [
      'trade position "ES 09-25" --account Sim101',
      'trade position ES1! --account Sim101 --json',
    ],
    run: async (ctx, { args: [instrument], options }) => {
      const { runPosition } = await import('../commands/position.js');
      await runPosition(ctx, instrument, options);
    },
  },
  {
    name: 'close',
    summary: 'Close a position at market, all or a part',
    description:
      "Close a position (ClosePosition): all of it, cancelling the instrument's working orders in the account first; or a part (--quantity contracts, or --percent of them rounded up), leaving the orders working. With --strategy, close an ATM strategy instead (CloseStrategy): its orders and its position.",
    options: [
      { flags: '--account <name>', description: 'account name, e.g. Sim101' },
      { flags: '--instrument <instrument>', description: "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)" },
      { flags: '--quantity <n>', description: 'close only this many contracts (more than the position closes it all)' },
      { flags: '--percent <p>', description: 'close this share of the position, rounded up: 25, 25% or 0.25' },
      { flags: '--strategy <id>', description: "close the ATM strategy with this id (its entry order's id, or a unique prefix of it)" },
      { flags: '--json', description: "print the service's body: {\"closedPositions\":[...],\"success\":true}" },
    ],
    examples: [
      `trade close --account Sim101 --instrument "ES 09-25"`,
      `trade close --account Sim101 --instrument "ES 09-25" --quantity 1`,
      `trade close --account Sim101 --instrument ES --percent 50 --json`,
      'trade close --account Sim101 --strategy 2ea6bcace215a4d965afa9907f5c88fd',
    ],
    run: async (ctx, { options }) => {
      const { runClose } = await import('../commands/close.js');
      await runClose(ctx, options);
    },
  },
  {
    name: 'flatten',
    summary: "Close an account's positions and cancel its orders",
    description:
      "Flatten an account (Flatten): cancel its working orders and close its positions, all or one instrument's. --side long|short, or --all-accounts, close the positions meeting every filter across accounts (FlattenEverything). --everything closes every position and cancels every order of every account: at a terminal you type a confirmation; a script needs --everything --yes.",
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config)' },
      { flags: '--instrument <instrument>', description: 'only this instrument' },
      { flags: '--side <side>', description: 'only long or only short positions' },
      { flags: '--all-accounts', description: 'every account (with --instrument or --side to narrow it)' },
      { flags: '--everything', description: 'every position and order of every account (asks for a typed confirmation, or needs --yes)' },
      { flags: '-y, --yes', description: 'with --everything: no confirmation (for scripts)' },
      { flags: '--json', description: "print the service's body: {\"closedPositions\":[...],\"success\":true}" },
    ],
    examples: [
      'trade flatten --account Sim101',
      'trade flatten --account Sim101 --instrument "ES 09-25"',
      'trade flatten --all-accounts --side short',
      'trade flatten --everything --yes',
    ],
    run: async (ctx, { options }) => {
      const { runFlatten } = await import('../commands/flatten.js');
      await runFlatten(ctx, options);
    },
  },
  {
    name: 'account',
    summary: "One account's money: cash, net liquidation, P&L",
    description:
      "Show one account (GetAccount): cash, net liquidation, realized P&L of the trading day, unrealized P&L, buying power and status. With --watermarks, its P&L high-water marks (GetWatermarks).",
    arguments: [
      { name: '[name]', description: 'the account (default: TRADE_ACCOUNT or the config)' },
    ],
    options: [
      { flags: '--watermarks', description: 'the P&L high-water marks instead' },
      { flags: '--json', description: "print the service's body (the Account object)" },
    ],
    examples: [
      'trade account Sim101',
      'trade account Sim101 --json',
      'trade account Sim101 --watermarks',
    ],
    run: async (ctx, { args: [name], options }) => {
      const { runAccount } = await import('../commands/accounts.js');
      await runAccount(ctx, name, options);
    },
  },
  {
    name: 'accounts',
    summary: 'List accounts (the default), snapshot them; add simulation accounts',
    description:
      "List the accounts with their money figures (ListAccounts), take a snapshot of every account and its positions (GetSnapshot), or add a simulation account to the embedded engine.",
    examples: [
      'trade accounts list',
      'trade accounts snapshot',
      'trade accounts add Sim102',
    ],
    commands: [
      {
        name: 'list',
        isDefault: true,
        description:
          'List every account with its cash, net liquidation, P&L and status (ListAccounts).',
        options: [
          { flags: '--json', description: "print the service's body: {\"accounts\":[...],\"count\":N,\"success\":true}" },
        ],
        examples: [
          'trade accounts list',
          'trade accounts list --json',
        ],
        run: async (ctx, { options }) => {
          const { runAccountsList } = await import('../commands/accounts.js');
          await runAccountsList(ctx, options);
        },
      },
      {
        name: 'snapshot',
        description:
          'Every account and its open positions at one moment (GetSnapshot).',
        options: [
          { flags: '--json', description: "print the service's body: {\"type\":\"snapshot\",\"accounts\":[...],...}" },
        ],
        examples: [
          'trade accounts snapshot',
          'trade accounts snapshot --json',
        ],
        run: async (ctx, { options }) => {
          const { runSnapshot } = await import('../commands/accounts.js');
          await runSnapshot(ctx, options);
        },
      },
      {
        name: 'add',
        description:
          'Add a simulation account to the embedded engine (names match in any case).',
        arguments: [
          { name: '<name>', description: 'the new account name' },
        ],
        options: [
          { flags: '--json', description: 'print {"account":NAME,"success":true} on stdout' },
        ],
        examples: [
          'trade accounts add Sim102',
        ],
        run: async (ctx, { args: [name], options }) => {
          const { runAccountsAdd } = await import('../commands/accounts.js');
          await runAccountsAdd(ctx, name, options);
        },
      },
    ],
  },
  {
    name: 'executions',
    summary: "An account's recent fills",
    description:
      "List an account's executions (GetExecutions) of the last --lookback seconds (default 320, at most 900), oldest first.",
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config, said on stderr)' },
      { flags: '--all-accounts', description: "every account's executions (GetExecutions of each account)" },
      { flags: '--lookback <seconds>', description: 'how far back, 1 to 900 seconds (default 320)' },
      { flags: '--json', description: "print the service's body: {\"executions\":[...]}" },
    ],
    examples: [
      'trade executions --account Sim101',
      'trade executions --account Sim101 --lookback 900 --json',
      'trade executions --all-accounts',
    ],
    run: async (ctx, { options }) => {
      const { runExecutions } = await import('../commands/executions.js');
      await runExecutions(ctx, options);
    },
  },
  {
    name: 'execution',
    summary: 'Show one fill',
    description:
      'Show one execution (GetExecution) by its id.',
    arguments: [
      { name: '<execution-id>', description: 'the id trade executions shows' },
    ],
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config)' },
      { flags: '--json', description: "print the service's body (the Execution object)" },
    ],
    examples: [
      'trade execution 550837ff9e784c2895ef6dab22d06be0 --account Sim101',
    ],
    run: async (ctx, { args: [executionId], options }) => {
      const { runExecution } = await import('../commands/executions.js');
      await runExecution(ctx, executionId, options);
    },
  },
  {
    name: 'report',
    summary: 'What the trading did: figures, trades, equity curve; --html for charts',
    description:
      "Report the trades of one account or several over a window (default: the current trading day, from 17:00 Chicago): executions paired first-in first-out into trades, then net profit, gross profit and loss, win rate, profit factor, average and largest win and loss, average duration, maximum drawdown, the longest losing streak and a Sharpe ratio of daily returns, in money after commission, overall, per instrument and per trading day; open positions with their unrealized P&L apart. On embedded it reads the store; on http and ws the execution history trade keeps in the data directory (the service keeps executions for 900 s), brought up to date first.",
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config, said on stderr; else every account)' },
      { flags: '--all-accounts', description: 'every account, whatever the default' },
      { flags: '--from <when>', description: 'start: a trading day (2025-09-03, from 17:00 Chicago the day before) or a time (2025-09-03T09:30, Chicago; or with Z or an offset)' },
      { flags: '--to <when>', description: 'end: a trading day (to its 17:00 Chicago close) or a time (default: now)' },
      { flags: '--days <n>', description: 'the last N trading days, the current one included (weekdays)' },
      { flags: '--instrument <instrument>', description: 'only this instrument (any form, resolved as for place)' },
      { flags: '--capital <amount>', description: 'the equity the curve starts from, for the drawdown percent and the Sharpe ratio (default 100000 per account)' },
      { flags: '--json', description: 'print the report as one JSON object (the same numbers)' },
      { flags: '--html <file>', description: 'also write a self-contained HTML page: summary, equity curve and drawdown, price charts with every entry and exit, the trades table' },
      { flags: '--open', description: 'open the --html page in the default browser' },
      { flags: '--follow', description: 'keep the report current: print it again at every new execution until Ctrl-C (--json: one object per line; --html: the file rewritten)' },
    ],
    examples: [
      'trade report --account Sim101',
      'trade report --all-accounts --days 5',
      'trade report --from 2025-09-02 --to 2025-09-03 --instrument ES --json',
      'trade report --account Sim101 --html report.html --open',
      'trade --backend ws report --follow',
    ],
    run: async (ctx, { options }) => {
      const { runReport } = await import('../commands/report.js');
      await runReport(ctx, options);
    },
  },
];
