/**
 * The simulator (the embedded engine): its prices and where they come from, its contract table, ATM templates.
 */
import type { CommandSpec } from './spec.js';

export const SIMULATOR_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'price',
    summary: 'Set, replay, random-walk, follow and list last prices on the embedded engine; choose their source',
    description:
      'Set and list last prices on the embedded engine; a new price fills the working orders it crosses.',
    examples: [
      `trade price set "ES 09-25" 4500.25`,
      'trade price list',
      'trade price replay es-bars.csv --instrument ES --speed 60',
      'trade price random ES --start 5000 --seed 7',
      'trade price source remote --instrument ES',
      'trade price run',
    ],
    commands: [
      {
        name: 'set',
        description:
          'Set the last price of an instrument and fill the working orders it crosses, oldest first.',
        arguments: [
          { name: '<instrument>', description: "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)" },
          { name: '<price>', description: 'a positive price' },
        ],
        options: [
          { flags: '--json', description: 'print the fills, cancellations and brackets as JSON on stdout' },
        ],
        examples: [
          `trade price set "ES 09-25" 4500.25`,
          `trade price set "NQ 12-25" 21000 --json`,
        ],
        run: async (ctx, { args: [instrument, value], options }) => {
          const { runPriceSet } = await import('../commands/price.js');
          await runPriceSet(ctx, instrument, value, options);
        },
      },
      {
        name: 'replay',
        description:
          "Replay ticks or bars from CSV or NDJSON files (either gzip-compressed: .csv.gz, .ndjson.gz) into the engine's last prices, filling the working orders they cross, at --speed times the files' pace (0 or max: as fast as possible, a backtest). Files are read as streams, in constant memory; several are merged by time. CSV has a header naming its columns: time (ISO 8601 or epoch seconds/ms; no zone means UTC), price for a tick or open,high,low,close for a bar, volume and instrument optional. A bar's prices are set open, low, high, close when it closed at or above its open, else open, high, low, close. Every file is checked whole (times in order, prices on the tick) before the first price is set. While it runs, the engine's clock is the replayed time for every process on the store (trade sandbox clock controls it). Ctrl-C stops it between two groups, exit 0.",
        arguments: [
          { name: '<file...>', description: 'one or more .csv, .ndjson, .csv.gz or .ndjson.gz files of ticks or bars' },
        ],
        options: [
          { flags: '--instrument <instrument>', description: "the instrument of records that name none: 'ES 09-25', ES, ES1!, ESU5" },
          { flags: '--speed <n>', description: "times real time from the file's times (default 1); 0 or max: as fast as possible" },
          { flags: '--from <time>', description: 'replay only the records at or after this time (ISO 8601, no zone: UTC; or epoch s/ms)' },
          { flags: '--to <time>', description: 'replay only the records before this time' },
          { flags: '--paused', description: 'start with the clock paused at the first record (trade sandbox clock resume or step, from another terminal, moves it)' },
          { flags: '--json', description: 'print a summary object on stdout at the end (and no progress line)' },
        ],
        examples: [
          'trade price replay es-bars.csv --instrument ES --speed 60',
          'trade price replay ticks.ndjson --speed max --json',
          'trade price replay es-ticks.csv.gz nq-ticks.csv.gz --speed max',
          'trade price replay es-ticks.csv.gz --from 2026-03-18T14:30:00Z --to 2026-03-18T15:00:00Z --speed 10',
        ],
        run: async (ctx, { args: [files], options }) => {
          const { runPriceReplay } = await import('../commands/price-replay.js');
          await runPriceReplay(ctx, files, options);
        },
      },
      {
        name: 'random',
        description:
          "Move an instrument's last price by a seeded random walk on its tick grid, filling the working orders it crosses: one step every --interval ms, each up to --max-ticks ticks either way. The same --seed, --start and sizes give the same prices. Ctrl-C stops it, exit 0.",
        arguments: [
          { name: '<instrument>', description: "instrument: 'ES 09-25', or ES, ES1!, ESU5" },
        ],
        options: [
          { flags: '--start <price>', description: "the first price to walk from (default: the last price, else the root's demo price)" },
          { flags: '--seed <n>', description: 'a whole number from 0 to 4294967295 (default: a random one, printed at the end)' },
          { flags: '--steps <n>', description: 'stop after this many steps (default: until Ctrl-C)' },
          { flags: '--interval <ms>', description: 'milliseconds between steps (default 1000; 0: as fast as possible)' },
          { flags: '--max-ticks <n>', description: 'the most ticks one step moves (default 4)' },
          { flags: '--tick-size <size>', description: 'the tick of an instrument the contract table does not have' },
          { flags: '--json', description: 'print a summary object on stdout at the end' },
        ],
        examples: [
          'trade price random ES --start 5000 --seed 7',
          'trade price random "NQ 12-26" --steps 500 --interval 0 --seed 42 --json',
        ],
        run: async (ctx, { args: [instrument], options }) => {
          const { runPriceRandom } = await import('../commands/price-feed.js');
          await runPriceRandom(ctx, instrument, options);
        },
      },
      {
        name: 'follow',
        description:
          "Follow live quotes from the remote service into the simulator: the service's quotes of the instruments (the WebSocket marketData stream with --from ws, GetQuote polled within the request budget with --from http), read with this profile's URL and token, become the embedded engine's last prices as they change and fill the working orders they cross. Orders stay in the simulator: only quotes are read. One line per price (--json: NDJSON) until Ctrl-C, exit 0; a lost connection exits 4.",
        arguments: [
          { name: '<instrument...>', description: "one or more instruments: 'ES 09-25', ES, ES1!, ESU5" },
        ],
        options: [
          { flags: '--from <backend>', description: "http or ws: where the quotes come from (default: the profile's backend when remote, else ws)" },
          { flags: '--json', description: 'NDJSON: one {"instrument","price","fills","time"} per price set' },
        ],
        examples: [
          'trade price follow ES NQ',
          'trade price follow "CL 01-27" --from http --json',
        ],
        run: async (ctx, { args: [instruments], options }) => {
          const { runPriceFollow } = await import('../commands/price-feed.js');
          await runPriceFollow(ctx, instruments, options);
        },
      },
      {
        name: 'source',
        description:
          "Choose where prices come from on the embedded engine, for every instrument, a root (--instrument ES: all its contracts) or one contract; the most specific choice wins, and every process sharing the store (trade serve too) follows it. manual: trade price set only, and a MARKET order for an instrument with no price is refused. demo (the default): as manual, but an instrument with no price starts at its root's demo price (trade contract list shows them). random, remote (the service's live quotes, with this profile's URL and token) and replay FILE: prices set while trade price run or trade serve drives them. With no SOURCE, lists the choices; --reset forgets one.",
        arguments: [
          { name: '[source]', description: 'manual, demo, random, remote or replay' },
          { name: '[file]', description: 'replay: a .csv or .ndjson file of ticks or bars (checked now)' },
        ],
        options: [
          { flags: '--instrument <instrument>', description: "a root (ES: every ES contract) or one contract ('ES 09-25', ESU5); none: every instrument" },
          { flags: '--reset', description: "forget the choice for --instrument (or every instrument's): back to the default" },
          { flags: '--speed <n>', description: "replay: times real time from the file's times (default 1); 0 or max: as fast as possible" },
          { flags: '--seed <n>', description: 'random: the walk\'s seed, 0 to 4294967295 (default: a random one, kept)' },
          { flags: '--interval <ms>', description: 'random: milliseconds between steps (default 1000)' },
          { flags: '--max-ticks <n>', description: 'random: the most ticks one step moves (default 4)' },
          { flags: '--from <backend>', description: "remote: http or ws (default: the profile's backend when remote, else ws)" },
          { flags: '--json', description: 'print the choice (or {"sources":[...]}) as JSON on stdout' },
        ],
        examples: [
          'trade price source',
          'trade price source manual',
          'trade price source remote --instrument ES --from ws',
          'trade price source random --instrument "NQ 12-26" --seed 7 --interval 500',
          'trade price source replay es-1min.csv --instrument "ES 03-27" --speed 60',
          'trade price source --reset --instrument ES',
        ],
        run: async (ctx, { args: [source, file], options }) => {
          const { runPriceSource } = await import('../commands/price-source.js');
          await runPriceSource(ctx, source, file, options);
        },
      },
      {
        name: 'run',
        description:
          "Run the price sources chosen with trade price source (random, remote, replay) in the foreground, setting the embedded engine's prices and filling what they cross: every chosen one, or the named instruments'. Ends when every replay and walk has ended and nothing endless remains, or at Ctrl-C (exit 0); a lost connection to the service exits 4.",
        arguments: [
          { name: '[instrument...]', description: "only these instruments' sources: 'ES 09-25', ES, ES1!, ESU5" },
        ],
        options: [
          { flags: '--json', description: 'print {"feeds":[...]} with what each source did at the end' },
        ],
        examples: [
          'trade price run',
          'trade price run "ES 03-27" --json',
        ],
        run: async (ctx, { args: [instruments], options }) => {
          const { runPriceRun } = await import('../commands/price-source.js');
          await runPriceRun(ctx, instruments, options);
        },
      },
      {
        name: 'list',
        description:
          'List the last price of every instrument.',
        options: [
          { flags: '--json', description: 'print {"prices":[...],"success":true} on stdout' },
        ],
        examples: [
          'trade price list',
          'trade price list --json',
        ],
        run: async (ctx, { options }) => {
          const { runPriceList } = await import('../commands/price.js');
          await runPriceList(ctx, options);
        },
      },
    ],
  },
  {
    name: 'contract',
    summary: "The contract table, your own contracts; the simulator's commission and slippage per root",
    description:
      "The contract table the simulator trades by (tick, point value, listed months, daily close), and the simulator's own settings per root: a commission per contract charged on every fill, and slippage in ticks on market and stop fills.",
    examples: [
      'trade contract list',
      'trade contract set ES --commission 2.25 --slippage 1',
      'trade contract add FDAX --tick-size 0.5 --point-value 25',
    ],
    commands: [
      {
        name: 'list',
        description:
          "Every root of the contract table with its tick, point value, tick value, listed months, daily close, and the simulator's commission and slippage.",
        options: [
          { flags: '--json', description: 'print {"contracts":[...],"success":true} on stdout' },
        ],
        examples: [
          'trade contract list',
          'trade contract list --json',
        ],
        run: async (ctx, { options }) => {
          const { runContractList } = await import('../commands/contract.js');
          await runContractList(ctx, options);
        },
      },
      {
        name: 'set',
        description:
          "Set the simulator's commission and slippage for a root: --commission is money per contract, charged on every fill (entry and exit) and taken from the account's cash; --slippage is ticks against you on market and stop fills (a buy fills higher, a sell lower). Limit orders never slip.",
        arguments: [
          { name: '<root>', description: 'a root of the contract table: ES, NQ, CL, ...' },
        ],
        options: [
          { flags: '--commission <money>', description: 'money per contract per fill, 0 to 1000' },
          { flags: '--slippage <ticks>', description: 'whole ticks, 0 to 100' },
          { flags: '--json', description: 'print {"root","commission","slippageTicks","success":true} on stdout' },
        ],
        examples: [
          'trade contract set ES --commission 2.25',
          'trade contract set CL --slippage 1 --json',
        ],
        run: async (ctx, { args: [root], options }) => {
          const { runContractSet } = await import('../commands/contract.js');
          await runContractSet(ctx, root, options);
        },
      },
      {
        name: 'add',
        description:
          "Add a contract the table lacks, or override one of the table's, for the simulator: its tick size and point value (money per 1.0 of price) at least. Prices of it must then be on its tick, and P&L is in money by its point value. Its instruments are written in the dated form ('FDAX 12-26'); the front-month forms (FDAX, FDAX1!) are the table's roots' only. Accounts are in US dollars: no currency conversion is modelled.",
        arguments: [
          { name: '<root>', description: 'letters and digits, up to 12: FDAX, ZW, ...' },
        ],
        options: [
          { flags: '--tick-size <size>', description: 'the smallest price step, e.g. 0.25', required: true },
          { flags: '--point-value <money>', description: 'money per 1.0 of price, e.g. 50', required: true },
          { flags: '--name <text>', description: 'a name (default: the root)' },
          { flags: '--exchange <text>', description: 'the exchange (default: CME)' },
          { flags: '--months <codes>', description: 'listed months as codes (HMUZ) or numbers (3,6,9,12); default every month' },
          { flags: '--close <HH:MM>', description: 'the daily session end in America/Chicago, for DAY orders (default 16:00)' },
          { flags: '--demo-price <price>', description: 'where the demo price source starts an instrument with no price (on the tick)' },
          { flags: '--json', description: 'print the contract as JSON on stdout' },
        ],
        examples: [
          'trade contract add FDAX --tick-size 0.5 --point-value 25 --months HMUZ --demo-price 19000',
          'trade contract add ES --tick-size 0.25 --point-value 50 --close 15:15',
        ],
        run: async (ctx, { args: [root], options }) => {
          const { runContractAdd } = await import('../commands/contract.js');
          await runContractAdd(ctx, root, options);
        },
      },
      {
        name: 'remove',
        description:
          "Remove a contract added with trade contract add; a root of the table comes back as the table has it. Orders and positions in it stay.",
        arguments: [
          { name: '<root>', description: 'a root added with trade contract add' },
        ],
        options: [
          { flags: '--json', description: 'print {"root","removed":true,"success":true} on stdout' },
        ],
        examples: [
          'trade contract remove FDAX',
        ],
        run: async (ctx, { args: [root], options }) => {
          const { runContractRemove } = await import('../commands/contract.js');
          await runContractRemove(ctx, root, options);
        },
      },
    ],
  },
  {
    name: 'atm',
    summary: 'Manage ATM strategy templates (brackets)',
    description:
      'Manage ATM strategy templates: the stop-loss and profit-target an entry gets when it fills.',
    examples: [
      'trade atm add Scalp --stop-loss 8 --profit-target 16',
      'trade atm list',
      'trade atm remove Scalp',
    ],
    commands: [
      {
        name: 'add',
        description:
          'Add an ATM strategy template (names match in any case).',
        arguments: [
          { name: '<name>', description: 'the template name, given to place with --strategy' },
        ],
        options: [
          { flags: '--stop-loss <ticks>', description: 'stop-loss distance from the entry fill, in ticks' },
          { flags: '--profit-target <ticks>', description: 'profit-target distance from the entry fill, in ticks' },
          { flags: '--tick-size <size>', description: 'price of one tick (default 0.25)' },
          { flags: '--json', description: 'print {"template":{...},"success":true} on stdout' },
        ],
        examples: [
          'trade atm add Scalp --stop-loss 8 --profit-target 16',
          'trade atm add Crude --stop-loss 20 --profit-target 40 --tick-size 0.01',
        ],
        run: async (ctx, { args: [name], options }) => {
          const { runAtmAdd } = await import('../commands/atm.js');
          await runAtmAdd(ctx, name, options);
        },
      },
      {
        name: 'list',
        description:
          'List the ATM strategy templates.',
        options: [
          { flags: '--json', description: 'print {"templates":[...],"success":true} on stdout' },
        ],
        examples: [
          'trade atm list',
          'trade atm list --json',
        ],
        run: async (ctx, { options }) => {
          const { runAtmList } = await import('../commands/atm.js');
          await runAtmList(ctx, options);
        },
      },
      {
        name: 'remove',
        description:
          'Remove an ATM strategy template. Entries already placed keep their distances.',
        arguments: [
          { name: '<name>', description: 'the template name' },
        ],
        options: [
          { flags: '--json', description: 'print {"template":{...},"success":true} on stdout' },
        ],
        examples: [
          'trade atm remove Scalp',
        ],
        run: async (ctx, { args: [name], options }) => {
          const { runAtmRemove } = await import('../commands/atm.js');
          await runAtmRemove(ctx, name, options);
        },
      },
    ],
  },
];
