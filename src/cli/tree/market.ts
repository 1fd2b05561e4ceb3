/**
 * Market data: quotes, and streams of quotes, P&L, orders and fills.
 */
import type { CommandSpec } from './spec.js';

export const MARKET_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'quote',
    summary: 'Quotes of one or more instruments',
    description:
      'Quotes (GetQuote): last, bid, ask, the day\'s open, high, low and volume, and the previous close. On the embedded engine they come from its last prices; an instrument with no price is an error naming it, and nothing is printed for the others.',
    arguments: [
      { name: '<instrument...>', description: "one or more instruments: 'ES 09-25', ES, ES1!, ESU5" },
    ],
    options: [
      { flags: '--json', description: "print the service's body (one Quote object, or an array for several)" },
    ],
    examples: [
      'trade quote "ES 09-25"',
      'trade quote ES NQ --json',
    ],
    run: async (ctx, { args: [instruments], options }) => {
      const { runQuote } = await import('../commands/quote.js');
      await runQuote(ctx, instruments, options);
    },
  },
  {
    name: 'watch',
    summary: 'Stream quotes, P&L, order changes or executions until Ctrl-C',
    description:
      "Print one line per update until Ctrl-C (SIGINT) or SIGTERM, which end it with exit 0. On ws the updates come from the service's WebSocket streams (orders are polled: the service has no order stream); on http they come from polling the read operations, at most 2 requests a second (the service allows 3); on embedded from the local store, seeing prices set by other processes within about 100 ms, no server needed. A lost connection ends it with exit 4.",
    examples: [
      'trade watch quotes ES NQ',
      'trade watch pnl --interval 5000',
      'trade watch orders --account Sim101 --json',
      'trade watch executions --account Sim101',
    ],
    commands: [
      {
        name: 'quotes',
        summary: 'Quotes of instruments, a line each time one changes',
        description:
          "One line per quote update of the instruments (marketData), starting with their quotes now; an instrument with no price is an error. On http a poll every second (GetQuote), printed only when a quote changed.",
        arguments: [
          { name: '<instrument...>', description: "one or more instruments: 'ES 09-25', ES, ES1!, ESU5" },
        ],
        options: [
          { flags: '--json', description: 'NDJSON: one Quote object per line' },
        ],
        examples: [
          'trade watch quotes "ES 09-25"',
          'trade --backend ws watch quotes ES NQ --json',
        ],
        run: async (ctx, { args: [instruments], options }) => {
          const { runWatchQuotes } = await import('../commands/watch.js');
          await runWatchQuotes(ctx, instruments, options);
        },
      },
      {
        name: 'pnl',
        summary: "Every account's P&L at an interval",
        description:
          "One line per account per update: net liquidation, cash, realized and unrealized P&L, open positions (pnlUpdate). On http each update is ListAccounts and GetAllPositions, at most once a second.",
        options: [
          { flags: '--interval <ms>', description: 'milliseconds between updates, 250 to 60000 (default 1000)' },
          { flags: '--json', description: 'NDJSON: one pnlUpdate event {"type":"pnlUpdate","epoch":...,"accounts":[...]} per line' },
        ],
        examples: [
          'trade watch pnl',
          'trade --backend ws watch pnl --interval 250 --json',
        ],
        run: async (ctx, { options }) => {
          const { runWatchPnl } = await import('../commands/watch.js');
          await runWatchPnl(ctx, options);
        },
      },
      {
        name: 'orders',
        summary: 'Orders as they are placed, fill or are cancelled',
        description:
          "The working orders now, then one line per order that is new or whose state, fill or prices changed, polling GetOrders (the day's orders): once a second on http and ws, on each change of the store on embedded.",
        options: [
          { flags: '--account <name>', description: 'only this account (default: TRADE_ACCOUNT or the config, else every account)' },
          { flags: '--json', description: 'NDJSON: one Order object per line' },
        ],
        examples: [
          'trade watch orders',
          'trade watch orders --account Sim101 --json',
        ],
        run: async (ctx, { options }) => {
          const { runWatchOrders } = await import('../commands/watch.js');
          await runWatchOrders(ctx, options);
        },
      },
      {
        name: 'executions',
        summary: 'Fills as they happen; keeps the execution history current',
        description:
          "The executions of the last 900 s, then one line per new execution (fill), each once. On http and ws GetExecutions is polled once a second per account, and every execution read is kept in the execution history that trade report reads (the service keeps executions for 900 s only); on embedded the store's fills, on each change of it.",
        options: [
          { flags: '--account <name>', description: 'only this account (default: TRADE_ACCOUNT or the config, else every account)' },
          { flags: '--all-accounts', description: 'every account, whatever the default' },
          { flags: '--json', description: 'NDJSON: one Execution object per line' },
        ],
        examples: [
          'trade watch executions --account Sim101',
          'trade --backend ws watch executions --all-accounts --json',
        ],
        run: async (ctx, { options }) => {
          const { runWatchExecutions } = await import('../commands/watch.js');
          await runWatchExecutions(ctx, options);
        },
      },
    ],
  },
];
