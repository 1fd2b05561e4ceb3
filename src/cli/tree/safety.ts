/**
 * Safety: the guard in front of every order, the halt switch, the journal.
 */
import type { CommandSpec } from './spec.js';

export const SAFETY_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'guard',
    summary: "The guard's rules, state and a dry check",
    description:
      'The guard stands in front of every order on every backend: rules set with `trade config set guard.RULE VALUE` (or TRADE_GUARD_RULE), a halt switch and a journal. See docs/guard.md.',
    examples: [
      'trade guard show',
      'trade guard test --account Sim101 --instrument "ES 09-25" --action BUY --quantity 5 --order-type MARKET --tif DAY',
    ],
    commands: [
      {
        name: 'show',
        description:
          'Print the rules in effect (and where each comes from), the state, the pace counters and the daily-loss limit.',
        options: [
          { flags: '--json', description: 'print {"rules":{...},"halts":[...],"pace":[...],"success":true} on stdout' },
        ],
        examples: [
          'trade guard show',
          'trade guard show --json',
        ],
        run: async (ctx, { options }) => {
          const { runGuardShow } = await import('../commands/guard.js');
          await runGuardShow(ctx, options);
        },
      },
      {
        name: 'test',
        description:
          'Say what the guard would do with an order, sending nothing (positions and P&L are read where a rule needs them).',
        options: [
          { flags: '--account <name>', description: 'account name, e.g. Sim101' },
          { flags: '--instrument <instrument>', description: "'<SYMBOL> <MM-YY>' (ES 09-25) or another form" },
          { flags: '--action <action>', description: 'BUY or SELL' },
          { flags: '--quantity <n>', description: 'contracts' },
          { flags: '--order-type <type>', description: 'MARKET, LIMIT, STOPMARKET or STOPLIMIT' },
          { flags: '--tif <tif>', description: 'DAY or GTC' },
          { flags: '--limit-price <price>', description: 'limit price' },
          { flags: '--stop-price <price>', description: 'stop price' },
          { flags: '--flatten-first', description: 'as place --flatten-first (FlatPlace)' },
          { flags: '--json', description: 'print {"pass":false,"rule":...,"limit":...,"value":...} on stdout' },
        ],
        examples: [
          'trade guard test --account Sim101 --instrument "ES 09-25" --action BUY --quantity 50 --order-type MARKET --tif DAY',
        ],
        run: async (ctx, { options }) => {
          const { runGuardTest } = await import('../commands/guard.js');
          await runGuardTest(ctx, options);
        },
      },
      {
        name: 'init',
        description:
          "Create the guard's ledger, or migrate it to this trade's schema: once for a desk's PostgreSQL ledger (guard.ledger postgres://…), from any machine; safe to run again and from two machines at once. See docs/desk-mode.md.",
        options: [
          { flags: '--json', description: 'print {"ledger":...,"schemaVersion":N,"from":N,"success":true} on stdout' },
        ],
        examples: [
          "trade config set guard.ledger 'postgres://trade@db.desk.example:5432/desk?sslmode=verify-full' && trade guard init",
          'trade guard init --json',
        ],
        run: async (ctx, { options }) => {
          const { runGuardInit } = await import('../commands/guard.js');
          await runGuardInit(ctx, options);
        },
      },
      {
        name: 'reset',
        description:
          "Move the guard's ledger aside (its pace counts, halts and journal start again empty): what to do when it is damaged.",
        options: [
          { flags: '--json', description: 'print {"movedTo":...,"success":true} on stdout' },
        ],
        examples: [
          'trade guard reset',
        ],
        run: async (ctx, { options }) => {
          const { runGuardReset } = await import('../commands/guard.js');
          await runGuardReset(ctx, options);
        },
      },
    ],
  },
  {
    name: 'halt',
    summary: 'Stop new orders from every trade process (the guard)',
    description:
      'Put the profile (or one account) in HALTED: every new order from any trade process on this machine is refused (exit 6) until `trade resume`. Cancel, close, flatten and orders that only reduce a position still go through.',
    options: [
      { flags: '--account <name>', description: 'halt this account only (default: the whole profile)' },
      { flags: '--reason <text>', description: 'why, shown with every refusal' },
      { flags: '--reducing', description: 'REDUCING instead: orders that reduce a position and changes that add no size still pass' },
      { flags: '--json', description: 'print {"halt":{...},"success":true} on stdout' },
    ],
    examples: [
      'trade halt --reason "runaway script"',
      'trade halt --account Sim101 --reducing',
      'trade resume',
    ],
    run: async (ctx, { options }) => {
      const { runHalt } = await import('../commands/guard.js');
      await runHalt(ctx, options);
    },
  },
  {
    name: 'resume',
    summary: 'Lift a halt (and a daily-loss halt for the rest of the day)',
    description:
      'Lift the halt of the profile (or of one account, which also lifts its daily-loss halt for the rest of the trading day).',
    options: [
      { flags: '--account <name>', description: 'resume this account (default: the whole profile)' },
      { flags: '--json', description: 'print {"scope":...,"resumed":true,"success":true} on stdout' },
    ],
    examples: [
      'trade resume',
      'trade resume --account Sim101',
    ],
    run: async (ctx, { options }) => {
      const { runResume } = await import('../commands/guard.js');
      await runResume(ctx, options);
    },
  },
  {
    name: 'history',
    summary: "The guard's journal: every money-moving request and its outcome",
    description:
      'List the journal: every request that moved money (or was refused by a rule), from every trade process, with its outcome.',
    options: [
      { flags: '--since <when>', description: 'only from this long ago (1h, 30m, 2d) or this ISO time' },
      { flags: '--account <name>', description: 'only this account' },
      { flags: '--unknown', description: 'only requests whose outcome is unknown (a network failure, or a process killed after sending)' },
      { flags: '--refused', description: 'only requests refused before anything was sent: by a guard rule, the account lock, an MCP tier or the CLI, with who asked and what' },
      { flags: '--json', description: 'print {"entries":[...],"count":N,"success":true} on stdout' },
    ],
    examples: [
      'trade history --since 1h',
      'trade history --unknown',
      'trade history --refused --since 1d',
      'trade history --account Sim101 --json',
    ],
    run: async (ctx, { options }) => {
      const { runHistory } = await import('../commands/guard.js');
      await runHistory(ctx, options);
    },
  },
  {
    name: 'reconcile',
    summary: 'Ask the backend what became of each request whose outcome is unknown',
    description:
      'For each journaled request whose outcome is unknown, ask the backend (GetOrderStatus by the client order id that was sent) and record the answer.',
    options: [
      { flags: '--json', description: 'print {"reconciled":[...],"count":N,"success":true} on stdout' },
    ],
    examples: [
      'trade reconcile',
      'trade history --unknown',
    ],
    run: async (ctx, { options }) => {
      const { runReconcile } = await import('../commands/guard.js');
      await runReconcile(ctx, options);
    },
  },
];
