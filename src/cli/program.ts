/**
 * The commander tree. Each action imports its command file on demand, so `trade --help` loads
 * neither the engine nor the schema.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { CONFIG_KEYS, ENV_FOR, KEY_HELP } from '../config/key-table.js';
import { GUARD_RULES } from '../guard/rules.js';
import { LEDGER_KEYS } from '../config/key-table.js';
import { VERSION } from '../version.js';
import { LIVE_SOURCES } from './complete-sources.js';
import type { MutableContext } from './context.js';
import { helpWidth, type Io } from './io.js';

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

function addOrderOptions(command: Command): Command {
  return command
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "'<SYMBOL> <MM-YY>' (ES 09-25), or ES, ES1!, ESU5, ESU25, 'ES SEP25' (resolved to a dated contract)")
    .option('--action <action>', 'BUY or SELL (any case)')
    .option('--quantity <n>', 'contracts, a whole number from 1')
    .option('--order-type <type>', 'MARKET, LIMIT, STOPMARKET or STOPLIMIT (any case)')
    .option('--tif <tif>', 'time in force: DAY or GTC (alias --time-in-force)')
    .addOption(new Option('--time-in-force <tif>').hideHelp())
    .option('--limit-price <price>', 'limit price, for LIMIT and STOPLIMIT')
    .option('--stop-price <price>', 'stop price, for STOPMARKET and STOPLIMIT')
    .option('--oco-id <id>', 'OCO group id: orders sharing it cancel each other')
    .option('--strategy <name>', 'ATM strategy template name')
    .option('--order-id <id>', "your own id for the order (1-64 of A-Z a-z 0-9 . _ : -): a second order with it is refused, so a resend after 'outcome unknown' is safe")
    .option('--dry-run', 'print exactly what would be sent (token masked) and send nothing; never prompts')
    .option('--json', 'print the service response body as JSON on stdout')
    .option('-y, --yes', 'send without the confirm that follows the prompts')
    .option('-i, --interactive', 'at a terminal, ask every field (flag values as defaults) and confirm')
    .option('--no-input', 'never prompt: missing flags are an error (as when stdin is not a terminal)');
}

/** `--guard max-order-qty=2`, repeatable: the rules given, by name, and the ledger's keys (`--guard ledger=…`); an unknown name is a usage error. */
function collectGuard(raw: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = raw.indexOf('=');
  const rule = eq < 0 ? raw.trim() : raw.slice(0, eq).trim().replace(/^guard\./, '');
  const names = [...GUARD_RULES, ...LEDGER_KEYS.map((key) => key.slice('guard.'.length))];
  if (eq < 0 || !names.includes(rule))
    throw new InvalidArgumentError(`it takes RULE=VALUE with a rule among ${GUARD_RULES.join(', ')}, or ledger=, machine=, ledger-timeout= (--guard max-order-qty=2).`);
  return { ...previous, [rule]: raw.slice(eq + 1) };
}

/** The commands that make or inspect profiles: a profile not yet in the config is theirs to name. */
const MAKES_PROFILES = new Set(['login', 'config', 'completion', '__complete']);

/**
 * `--profile NAME` for a profile the config does not have is an error listing the ones it has
 * (exit 3), not a silent run on the defaults; `trade login` and `trade config` create profiles.
 */
async function checkProfile(ctx: MutableContext, profile: string, action: Command): Promise<void> {
  let top = action;
  while (top.parent?.parent) top = top.parent;
  if (MAKES_PROFILES.has(top.name())) return;
  const { readConfigFile } = await import('../config/config-file.js');
  const { ConfigError } = await import('../order/errors.js');
  const profiles = readConfigFile(ctx.env).profiles;
  const names = profiles !== null && typeof profiles === 'object' && !Array.isArray(profiles) ? Object.keys(profiles) : [];
  if (names.includes(profile) || profile === 'default') return;
  throw new ConfigError(`Unknown profile '${profile}': ${names.length > 0 ? `the config has ${names.join(', ')}` : 'the config has no profiles yet'}`, {
    code: 'unknown_profile',
    hint: `Nothing was done. Create it with: trade --profile ${profile} login, or trade --profile ${profile} config set KEY VALUE.`,
  });
}

export function buildProgram(ctx: MutableContext, io: Io): Command {
  const program = new Command('trade')
    .description('Place orders and reverse positions on trading accounts, from scripts or a terminal.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--backend <name>', 'embedded, http or ws (default: TRADE_BACKEND, config, embedded)')
    .option('--profile <name>', 'config profile to use (default: TRADE_PROFILE, "default")')
    .option('--insecure', 'allow sending the token over plain http:// or ws:// to another host')
    .option('--confirm-live', "confirm orders to an account that is not a simulation account (the guard's confirm-live rule)")
    .option('--guard <rule=value>', 'a guard rule for this run, over TRADE_GUARD_* and the config (repeatable): --guard max-order-qty=2', collectGuard)
    .hook('preAction', async (_program, action) => {
      const { backend, profile, insecure, confirmLive, guard } = action.optsWithGlobals();
      ctx.setGlobalFlags({ backend, profile, insecure, confirmLive, guard });
      if (profile !== undefined) await checkProfile(ctx, profile, action);
    })
    .showSuggestionAfterError(true)
    // Wrap descriptions even in a narrow terminal (commander's own floor is 40 columns).
    .configureHelp({ showGlobalOptions: true, minWidthToWrap: 24 })
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(io.errColor.red(s)),
      // The same streams and rules as everything else prints by, not process.stdout's.
      getOutHelpWidth: () => helpWidth(io.stdout, ctx.env) ?? 80,
      getErrHelpWidth: () => helpWidth(io.stderr, ctx.env) ?? 80,
      getOutHasColors: () => io.color.level > 0,
      getErrHasColors: () => io.errColor.level > 0,
    })
    .helpCommand('help [command]', 'Show help for a command')
    .addHelpText(
      'after',
      examples(
        `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
        `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
        `trade price set "ES 09-25" 4500`,
        'trade positions --account Sim101',
      ),
    );

  addOrderOptions(
    program
      .command('place')
      .option('--require-position <sides>', 'place only when the position in the instrument is one of these: flat, long, short (a comma list)')
      .option('--max-positions <n>', 'refuse an order that opens a position when the account already has this many open')
      .option('--flatten-first', "cancel the instrument's working orders and close its position first, then place (FlatPlace)")
      .summary('Place an order')
      .description(
        'Place an order (Place Order). At a terminal, asks for the fields the flags leave out, then confirms; otherwise every required flag must be given.',
      )
      .addHelpText(
        'after',
        examples(
          `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
          `trade place --account Sim101 --instrument "NQ 12-25" --action sell --quantity 2 --order-type limit --limit-price 21000.25 --tif gtc --json`,
          'trade place                              # at a terminal: asks for each field, then confirms',
          `trade place -i --instrument "ES 09-25"   # asks every field, the flags as defaults`,
          `trade place --account Sim101 --instrument ES --action BUY --quantity 1 --order-type MARKET --tif DAY --order-id my-1 --require-position flat`,
          `trade place --account Sim101 --instrument "ES 09-25" --action SELL --quantity 2 --order-type MARKET --tif DAY --flatten-first`,
        ),
      ),
  ).action(async (options) => {
    const { runPlace } = await import('./commands/place.js');
    await runPlace(ctx, options);
  });

  addOrderOptions(
    program
      .command('reverse')
      .option('--invert', 'turn the position over at its own size (Reverse): long 2 becomes short 2; takes only --account and --instrument')
      .option('--same-side', "go on though the new order is on the position's own side (long and BUY): refused in a script without it, warned at a terminal")
      .summary('Reverse a position: close it, place a new order')
      .description(
        'Reverse a position (ReversePosition): cancel the working orders in the instrument, close the position, then place the new order. With --invert (Reverse), turn it over at its own size instead. Fails, changing nothing, when no position is open.',
      )
      .addHelpText(
        'after',
        examples(
          `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
          'trade reverse --account Sim101           # at a terminal: asks for the rest, then confirms',
          `trade reverse --invert --account Sim101 --instrument "ES 09-25"`,
        ),
      ),
  ).action(async (options) => {
    const { runReverse } = await import('./commands/reverse.js');
    await runReverse(ctx, options);
  });

  program
    .command('cancel')
    .summary('Cancel a working order, or all of them')
    .description(
      "Cancel a working order (Cancel); orders in its OCO group are cancelled with it. A filled, cancelled, expired or unknown order is refused. With --all, every working order of the account (CancelOrders); with --all-accounts, of every account (CancelAllOrders); --instrument narrows either to one instrument.",
    )
    .argument('[order-id]', 'the id PlaceOrder returned (or your --order-id), or a unique prefix of it (at least 4 characters)')
    .option('--account <name>', 'the account the order is in (required by remote backends)')
    .option('--all', "every working order of the account")
    .option('--all-accounts', 'every working order of every account')
    .option('--instrument <instrument>', 'with --all or --all-accounts: only this instrument')
    .option('--json', "print the service's body: {\"orderId\":\"...\",\"success\":true}, or {\"orderIds\":[...],\"success\":true}")
    .addHelpText(
      'after',
      examples(
        'trade cancel 2ea6bcace215a4d965afa9907f5c88fd --account Sim101',
        'trade cancel --all --account Sim101 --instrument "ES 09-25"',
        'trade cancel --all-accounts --json',
      ),
    )
    .action(async (orderId: string | undefined, options) => {
      const { runCancel } = await import('./commands/cancel.js');
      await runCancel(ctx, orderId, options);
    });

  addOrderOptions(
    program
      .command('replace')
      .summary('Cancel a working order and place another in one step')
      .description(
        'Replace a working order (Replace): the new order the flags describe is checked first; then the old one is cancelled and the new one placed, both or neither. The new order gets an id of its own.',
      )
      .argument('<order-id>', 'the working order to replace (its id, or a unique prefix of it)')
      .addHelpText(
        'after',
        examples(
          `trade replace 2ea6bcace215a4d965afa9907f5c88fd --account Sim101 --instrument "ES 09-25" --action BUY --quantity 2 --order-type LIMIT --limit-price 4490 --tif GTC`,
        ),
      ),
  ).action(async (orderId: string, options) => {
    const { runReplace } = await import('./commands/replace.js');
    await runReplace(ctx, orderId, options);
  });

  program
    .command('modify')
    .summary("Change a working order's quantity, limit or stop")
    .description(
      "Change a working order (Change): its quantity, limit price or stop price; what is not given stays as it is. The order keeps its id. A limit moved through the last price fills at once; a stop moved to the wrong side of it is refused.",
    )
    .argument('<order-id>', 'the working order (its id, or a unique prefix of it)')
    .option('--account <name>', 'the account the order is in (default: TRADE_ACCOUNT or the config)')
    .option('--quantity <n>', 'new quantity, a whole number from 1')
    .option('--limit-price <price>', 'new limit price (LIMIT and STOPLIMIT orders)')
    .option('--stop-price <price>', 'new stop price (STOPMARKET and STOPLIMIT orders)')
    .option('--json', "print the service's body: {\"orderId\":\"...\",\"success\":true}")
    .addHelpText(
      'after',
      examples(
        'trade modify 2ea6bcace215a4d965afa9907f5c88fd --account Sim101 --limit-price 4495.5',
        'trade modify my-order-1 --account Sim101 --quantity 3 --stop-price 4480',
      ),
    )
    .action(async (orderId: string, options) => {
      const { runModify } = await import('./commands/modify.js');
      await runModify(ctx, orderId, options);
    });

  program
    .command('bracket')
    .summary('Protect a position with a take-profit and a stop-loss')
    .description(
      "Cancel the instrument's working orders, then place a take-profit (LIMIT) and a stop-loss (STOPMARKET) on the other side, one cancelling the other (CancelAndBracket). --action is the side of the position protected: BUY protects a long. The size is clamped to the position; with no position the bracket is placed at --quantity.",
    )
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)")
    .option('--action <action>', 'BUY (protect a long) or SELL (protect a short)')
    .option('--quantity <n>', 'contracts, a whole number from 1')
    .option('--take-profit <price>', 'limit price of the target')
    .option('--stop-loss <price>', 'stop price of the stop')
    .option('--tif <tif>', 'DAY or GTC (default GTC)')
    .option('--json', "print the service's body: {\"orderIds\":[...],\"cancelledOrderIds\":[...],\"ocoId\":\"...\",\"quantity\":N,\"success\":true}")
    .addHelpText(
      'after',
      examples(`trade bracket --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --take-profit 4510 --stop-loss 4490`),
    )
    .action(async (options) => {
      const { runBracket } = await import('./commands/bracket.js');
      await runBracket(ctx, options);
    });

  program
    .command('close')
    .summary('Close a position at market, all or a part')
    .description(
      "Close a position (ClosePosition): all of it, cancelling the instrument's working orders in the account first; or a part (--quantity contracts, or --percent of them rounded up), leaving the orders working. With --strategy, close an ATM strategy instead (CloseStrategy): its orders and its position.",
    )
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)")
    .option('--quantity <n>', 'close only this many contracts (more than the position closes it all)')
    .option('--percent <p>', 'close this share of the position, rounded up: 25, 25% or 0.25')
    .option('--strategy <id>', "close the ATM strategy with this id (its entry order's id, or a unique prefix of it)")
    .option('--json', "print the service's body: {\"closedPositions\":[...],\"success\":true}")
    .addHelpText(
      'after',
      examples(
        `trade close --account Sim101 --instrument "ES 09-25"`,
        `trade close --account Sim101 --instrument "ES 09-25" --quantity 1`,
        `trade close --account Sim101 --instrument ES --percent 50 --json`,
        'trade close --account Sim101 --strategy 2ea6bcace215a4d965afa9907f5c88fd',
      ),
    )
    .action(async (options) => {
      const { runClose } = await import('./commands/close.js');
      await runClose(ctx, options);
    });

  program
    .command('flatten')
    .summary("Close an account's positions and cancel its orders")
    .description(
      "Flatten an account (Flatten): cancel its working orders and close its positions, all or one instrument's. --side long|short, or --all-accounts, close the positions meeting every filter across accounts (FlattenEverything). --everything closes every position and cancels every order of every account: at a terminal you type a confirmation; a script needs --everything --yes.",
    )
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config)')
    .option('--instrument <instrument>', 'only this instrument')
    .option('--side <side>', 'only long or only short positions')
    .option('--all-accounts', 'every account (with --instrument or --side to narrow it)')
    .option('--everything', 'every position and order of every account (asks for a typed confirmation, or needs --yes)')
    .option('-y, --yes', 'with --everything: no confirmation (for scripts)')
    .option('--json', "print the service's body: {\"closedPositions\":[...],\"success\":true}")
    .addHelpText(
      'after',
      examples(
        'trade flatten --account Sim101',
        'trade flatten --account Sim101 --instrument "ES 09-25"',
        'trade flatten --all-accounts --side short',
        'trade flatten --everything --yes',
      ),
    )
    .action(async (options) => {
      const { runFlatten } = await import('./commands/flatten.js');
      await runFlatten(ctx, options);
    });

  const price = program
    .command('price')
    .summary('Set, replay, random-walk, follow and list last prices on the embedded engine; choose their source')
    .description('Set and list last prices on the embedded engine; a new price fills the working orders it crosses.')
    .addHelpText('after', examples(`trade price set "ES 09-25" 4500.25`, 'trade price list', 'trade price replay es-bars.csv --instrument ES --speed 60', 'trade price random ES --start 5000 --seed 7', 'trade price source remote --instrument ES', 'trade price run'));
  price
    .command('set')
    .description('Set the last price of an instrument and fill the working orders it crosses, oldest first.')
    .argument('<instrument>', "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)")
    .argument('<price>', 'a positive price')
    .option('--json', 'print the fills, cancellations and brackets as JSON on stdout')
    .addHelpText('after', examples(`trade price set "ES 09-25" 4500.25`, `trade price set "NQ 12-25" 21000 --json`))
    .action(async (instrument: string, value: string, options) => {
      const { runPriceSet } = await import('./commands/price.js');
      await runPriceSet(ctx, instrument, value, options);
    });
  price
    .command('replay')
    .description(
      "Replay ticks or bars from CSV or NDJSON files (either gzip-compressed: .csv.gz, .ndjson.gz) into the engine's last prices, filling the working orders they cross, at --speed times the files' pace (0 or max: as fast as possible, a backtest). Files are read as streams, in constant memory; several are merged by time. CSV has a header naming its columns: time (ISO 8601 or epoch seconds/ms; no zone means UTC), price for a tick or open,high,low,close for a bar, volume and instrument optional. A bar's prices are set open, low, high, close when it closed at or above its open, else open, high, low, close. Every file is checked whole (times in order, prices on the tick) before the first price is set. While it runs, the engine's clock is the replayed time for every process on the store (trade sandbox clock controls it). Ctrl-C stops it between two groups, exit 0.",
    )
    .argument('<file...>', 'one or more .csv, .ndjson, .csv.gz or .ndjson.gz files of ticks or bars')
    .option('--instrument <instrument>', "the instrument of records that name none: 'ES 09-25', ES, ES1!, ESU5")
    .option('--speed <n>', "times real time from the file's times (default 1); 0 or max: as fast as possible")
    .option('--from <time>', 'replay only the records at or after this time (ISO 8601, no zone: UTC; or epoch s/ms)')
    .option('--to <time>', 'replay only the records before this time')
    .option('--paused', 'start with the clock paused at the first record (trade sandbox clock resume or step, from another terminal, moves it)')
    .option('--json', 'print a summary object on stdout at the end (and no progress line)')
    .addHelpText(
      'after',
      examples(
        'trade price replay es-bars.csv --instrument ES --speed 60',
        'trade price replay ticks.ndjson --speed max --json',
        'trade price replay es-ticks.csv.gz nq-ticks.csv.gz --speed max',
        'trade price replay es-ticks.csv.gz --from 2026-03-18T14:30:00Z --to 2026-03-18T15:00:00Z --speed 10',
      ),
    )
    .action(async (files: string[], options) => {
      const { runPriceReplay } = await import('./commands/price-replay.js');
      await runPriceReplay(ctx, files, options);
    });
  price
    .command('random')
    .description(
      "Move an instrument's last price by a seeded random walk on its tick grid, filling the working orders it crosses: one step every --interval ms, each up to --max-ticks ticks either way. The same --seed, --start and sizes give the same prices. Ctrl-C stops it, exit 0.",
    )
    .argument('<instrument>', "instrument: 'ES 09-25', or ES, ES1!, ESU5")
    .option('--start <price>', "the first price to walk from (default: the last price, else the root's demo price)")
    .option('--seed <n>', 'a whole number from 0 to 4294967295 (default: a random one, printed at the end)')
    .option('--steps <n>', 'stop after this many steps (default: until Ctrl-C)')
    .option('--interval <ms>', 'milliseconds between steps (default 1000; 0: as fast as possible)')
    .option('--max-ticks <n>', 'the most ticks one step moves (default 4)')
    .option('--tick-size <size>', 'the tick of an instrument the contract table does not have')
    .option('--json', 'print a summary object on stdout at the end')
    .addHelpText('after', examples('trade price random ES --start 5000 --seed 7', 'trade price random "NQ 12-26" --steps 500 --interval 0 --seed 42 --json'))
    .action(async (instrument: string, options) => {
      const { runPriceRandom } = await import('./commands/price-feed.js');
      await runPriceRandom(ctx, instrument, options);
    });
  price
    .command('follow')
    .description(
      "Follow live quotes from the remote service into the simulator: the service's quotes of the instruments (the WebSocket marketData stream with --from ws, GetQuote polled within the request budget with --from http), read with this profile's URL and token, become the embedded engine's last prices as they change and fill the working orders they cross. Orders stay in the simulator: only quotes are read. One line per price (--json: NDJSON) until Ctrl-C, exit 0; a lost connection exits 4.",
    )
    .argument('<instrument...>', "one or more instruments: 'ES 09-25', ES, ES1!, ESU5")
    .option('--from <backend>', "http or ws: where the quotes come from (default: the profile's backend when remote, else ws)")
    .option('--json', 'NDJSON: one {"instrument","price","fills","time"} per price set')
    .addHelpText('after', examples('trade price follow ES NQ', 'trade price follow "CL 01-27" --from http --json'))
    .action(async (instruments: string[], options) => {
      const { runPriceFollow } = await import('./commands/price-feed.js');
      await runPriceFollow(ctx, instruments, options);
    });
  price
    .command('source')
    .description(
      "Choose where prices come from on the embedded engine, for every instrument, a root (--instrument ES: all its contracts) or one contract; the most specific choice wins, and every process sharing the store (trade serve too) follows it. manual: trade price set only, and a MARKET order for an instrument with no price is refused. demo (the default): as manual, but an instrument with no price starts at its root's demo price (trade contract list shows them). random, remote (the service's live quotes, with this profile's URL and token) and replay FILE: prices set while trade price run or trade serve drives them. With no SOURCE, lists the choices; --reset forgets one.",
    )
    .argument('[source]', 'manual, demo, random, remote or replay')
    .argument('[file]', 'replay: a .csv or .ndjson file of ticks or bars (checked now)')
    .option('--instrument <instrument>', "a root (ES: every ES contract) or one contract ('ES 09-25', ESU5); none: every instrument")
    .option('--reset', "forget the choice for --instrument (or every instrument's): back to the default")
    .option('--speed <n>', "replay: times real time from the file's times (default 1); 0 or max: as fast as possible")
    .option('--seed <n>', 'random: the walk\'s seed, 0 to 4294967295 (default: a random one, kept)')
    .option('--interval <ms>', 'random: milliseconds between steps (default 1000)')
    .option('--max-ticks <n>', 'random: the most ticks one step moves (default 4)')
    .option('--from <backend>', "remote: http or ws (default: the profile's backend when remote, else ws)")
    .option('--json', 'print the choice (or {"sources":[...]}) as JSON on stdout')
    .addHelpText(
      'after',
      examples(
        'trade price source',
        'trade price source manual',
        'trade price source remote --instrument ES --from ws',
        'trade price source random --instrument "NQ 12-26" --seed 7 --interval 500',
        'trade price source replay es-1min.csv --instrument "ES 03-27" --speed 60',
        'trade price source --reset --instrument ES',
      ),
    )
    .action(async (source: string | undefined, file: string | undefined, options) => {
      const { runPriceSource } = await import('./commands/price-source.js');
      await runPriceSource(ctx, source, file, options);
    });
  price
    .command('run')
    .description(
      "Run the price sources chosen with trade price source (random, remote, replay) in the foreground, setting the embedded engine's prices and filling what they cross: every chosen one, or the named instruments'. Ends when every replay and walk has ended and nothing endless remains, or at Ctrl-C (exit 0); a lost connection to the service exits 4.",
    )
    .argument('[instrument...]', "only these instruments' sources: 'ES 09-25', ES, ES1!, ESU5")
    .option('--json', 'print {"feeds":[...]} with what each source did at the end')
    .addHelpText('after', examples('trade price run', 'trade price run "ES 03-27" --json'))
    .action(async (instruments: string[], options) => {
      const { runPriceRun } = await import('./commands/price-source.js');
      await runPriceRun(ctx, instruments, options);
    });
  price
    .command('list')
    .description('List the last price of every instrument.')
    .option('--json', 'print {"prices":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade price list', 'trade price list --json'))
    .action(async (options) => {
      const { runPriceList } = await import('./commands/price.js');
      await runPriceList(ctx, options);
    });

  const contract = program
    .command('contract')
    .summary("The contract table, your own contracts; the simulator's commission and slippage per root")
    .description("The contract table the simulator trades by (tick, point value, listed months, daily close), and the simulator's own settings per root: a commission per contract charged on every fill, and slippage in ticks on market and stop fills.")
    .addHelpText('after', examples('trade contract list', 'trade contract set ES --commission 2.25 --slippage 1', 'trade contract add FDAX --tick-size 0.5 --point-value 25'));
  contract
    .command('list')
    .description("Every root of the contract table with its tick, point value, tick value, listed months, daily close, and the simulator's commission and slippage.")
    .option('--json', 'print {"contracts":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade contract list', 'trade contract list --json'))
    .action(async (options) => {
      const { runContractList } = await import('./commands/contract.js');
      await runContractList(ctx, options);
    });
  contract
    .command('set')
    .description("Set the simulator's commission and slippage for a root: --commission is money per contract, charged on every fill (entry and exit) and taken from the account's cash; --slippage is ticks against you on market and stop fills (a buy fills higher, a sell lower). Limit orders never slip.")
    .argument('<root>', 'a root of the contract table: ES, NQ, CL, ...')
    .option('--commission <money>', 'money per contract per fill, 0 to 1000')
    .option('--slippage <ticks>', 'whole ticks, 0 to 100')
    .option('--json', 'print {"root","commission","slippageTicks","success":true} on stdout')
    .addHelpText('after', examples('trade contract set ES --commission 2.25', 'trade contract set CL --slippage 1 --json'))
    .action(async (root: string, options) => {
      const { runContractSet } = await import('./commands/contract.js');
      await runContractSet(ctx, root, options);
    });

  contract
    .command('add')
    .description(
      "Add a contract the table lacks, or override one of the table's, for the simulator: its tick size and point value (money per 1.0 of price) at least. Prices of it must then be on its tick, and P&L is in money by its point value. Its instruments are written in the dated form ('FDAX 12-26'); the front-month forms (FDAX, FDAX1!) are the table's roots' only. Accounts are in US dollars: no currency conversion is modelled.",
    )
    .argument('<root>', 'letters and digits, up to 12: FDAX, ZW, ...')
    .requiredOption('--tick-size <size>', 'the smallest price step, e.g. 0.25')
    .requiredOption('--point-value <money>', 'money per 1.0 of price, e.g. 50')
    .option('--name <text>', 'a name (default: the root)')
    .option('--exchange <text>', 'the exchange (default: CME)')
    .option('--months <codes>', 'listed months as codes (HMUZ) or numbers (3,6,9,12); default every month')
    .option('--close <HH:MM>', 'the daily session end in America/Chicago, for DAY orders (default 16:00)')
    .option('--demo-price <price>', 'where the demo price source starts an instrument with no price (on the tick)')
    .option('--json', 'print the contract as JSON on stdout')
    .addHelpText('after', examples('trade contract add FDAX --tick-size 0.5 --point-value 25 --months HMUZ --demo-price 19000', 'trade contract add ES --tick-size 0.25 --point-value 50 --close 15:15'))
    .action(async (root: string, options) => {
      const { runContractAdd } = await import('./commands/contract.js');
      await runContractAdd(ctx, root, options);
    });
  contract
    .command('remove')
    .description("Remove a contract added with trade contract add; a root of the table comes back as the table has it. Orders and positions in it stay.")
    .argument('<root>', 'a root added with trade contract add')
    .option('--json', 'print {"root","removed":true,"success":true} on stdout')
    .addHelpText('after', examples('trade contract remove FDAX'))
    .action(async (root: string, options) => {
      const { runContractRemove } = await import('./commands/contract.js');
      await runContractRemove(ctx, root, options);
    });

  const atm = program
    .command('atm')
    .summary('Manage ATM strategy templates (brackets)')
    .description('Manage ATM strategy templates: the stop-loss and profit-target an entry gets when it fills.')
    .addHelpText('after', examples('trade atm add Scalp --stop-loss 8 --profit-target 16', 'trade atm list', 'trade atm remove Scalp'));
  atm
    .command('add')
    .description('Add an ATM strategy template (names match in any case).')
    .argument('<name>', 'the template name, given to place with --strategy')
    .option('--stop-loss <ticks>', 'stop-loss distance from the entry fill, in ticks')
    .option('--profit-target <ticks>', 'profit-target distance from the entry fill, in ticks')
    .option('--tick-size <size>', 'price of one tick (default 0.25)')
    .option('--json', 'print {"template":{...},"success":true} on stdout')
    .addHelpText(
      'after',
      examples('trade atm add Scalp --stop-loss 8 --profit-target 16', 'trade atm add Crude --stop-loss 20 --profit-target 40 --tick-size 0.01'),
    )
    .action(async (name: string, options) => {
      const { runAtmAdd } = await import('./commands/atm.js');
      await runAtmAdd(ctx, name, options);
    });
  atm
    .command('list')
    .description('List the ATM strategy templates.')
    .option('--json', 'print {"templates":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade atm list', 'trade atm list --json'))
    .action(async (options) => {
      const { runAtmList } = await import('./commands/atm.js');
      await runAtmList(ctx, options);
    });
  atm
    .command('remove')
    .description('Remove an ATM strategy template. Entries already placed keep their distances.')
    .argument('<name>', 'the template name')
    .option('--json', 'print {"template":{...},"success":true} on stdout')
    .addHelpText('after', examples('trade atm remove Scalp'))
    .action(async (name: string, options) => {
      const { runAtmRemove } = await import('./commands/atm.js');
      await runAtmRemove(ctx, name, options);
    });

  program
    .command('positions')
    .summary('List open positions')
    .description(
      "List positions (the service's GetPositions for one account, GetAllPositions for every account): the side (Long, Short), the size, the average price, the last price and the unrealized P&L.",
    )
    .option('--account <name>', 'only this account (default: TRADE_ACCOUNT or the config, said on stderr; none: every account)')
    .option('--all-accounts', 'every account, whatever the default account')
    .option('--instrument <instrument>', 'only this instrument (any form: ES 09-25, ES, ES1!, ESU5)')
    .option('--all', 'include flat positions (instruments traded and closed)')
    .option('--include-flat', 'the same as --all (the service calls it includeFlat)')
    .option('--json', "print the service's body: {\"positions\":[...],\"count\":N,\"success\":true}")
    .addHelpText('after', examples('trade positions', 'trade positions --account Sim101 --json', 'trade positions --all', 'trade positions --all-accounts'))
    .action(async (options) => {
      const { runPositions } = await import('./commands/positions.js');
      await runPositions(ctx, options);
    });

  program
    .command('orders')
    .summary("List an account's orders")
    .description(
      "List an account's orders, oldest first (the service's GetOrders): working ones and those of the current trading day, with their state and fills.",
    )
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config, said on stderr); this or --all-accounts is required')
    .option('--all-accounts', "every account's orders (GetOrders of each account)")
    .option('--instrument <instrument>', 'only this instrument (any form: ES 09-25, ES, ES1!, ESU5)')
    .option('--active', 'working orders only')
    .option('--json', "print the service's body: {\"orders\":[...],\"count\":N,\"success\":true}")
    .addHelpText('after', examples('trade orders --account Sim101', 'trade orders --account Sim101 --active --json', 'trade orders --all-accounts --active'))
    .action(async (options) => {
      const { runOrders } = await import('./commands/orders.js');
      await runOrders(ctx, options);
    });

  program
    .command('order')
    .summary('Show one order, or only its state')
    .description("Show one order (GetOrder): its side, size, type, prices, state and fills. With --status, only its state (GetOrderStatus): the cheap call to poll, and the way to learn what became of an order whose outcome was unknown.")
    .argument('<order-id>', 'the id PlaceOrder returned (or your --order-id), or a unique prefix of it (at least 4 characters)')
    .option('--account <name>', 'the account the order is in (default: TRADE_ACCOUNT or the config)')
    .option('--status', 'only the state: Working, Filled, Cancelled, ...')
    .option('--lifecycle', "the order's events (GetOrderLifecycle; the service's add-on 1.13.2+; not simulated by the embedded engine)")
    .option('--json', "print the service's body (the Order object, or {\"status\":\"Filled\",...})")
    .addHelpText(
      'after',
      examples(
        'trade order 2ea6bcace215a4d965afa9907f5c88fd --account Sim101',
        'trade order my-order-1 --account Sim101 --status',
        'trade --backend http order my-order-1 --account Sim101 --lifecycle',
      ),
    )
    .action(async (orderId: string, options) => {
      const { runOrder } = await import('./commands/order.js');
      await runOrder(ctx, orderId, options);
    });

  program
    .command('position')
    .summary('Show the position in one instrument')
    .description('Show the position of an account in one instrument (GetPosition): Long, Short or Flat, the size, the average price, the last price and the unrealized P&L. A flat instrument is not an error.')
    .argument('<instrument>', "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)")
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config)')
    .option('--json', "print the service's body (the Position object)")
    .addHelpText('after', examples('trade position "ES 09-25" --account Sim101', 'trade position ES1! --account Sim101 --json'))
    .action(async (instrument: string, options) => {
      const { runPosition } = await import('./commands/position.js');
      await runPosition(ctx, instrument, options);
    });

  program
    .command('quote')
    .summary('Quotes of one or more instruments')
    .description('Quotes (GetQuote): last, bid, ask, the day\'s open, high, low and volume, and the previous close. On the embedded engine they come from its last prices; an instrument with no price is an error naming it, and nothing is printed for the others.')
    .argument('<instrument...>', "one or more instruments: 'ES 09-25', ES, ES1!, ESU5")
    .option('--json', "print the service's body (one Quote object, or an array for several)")
    .addHelpText('after', examples('trade quote "ES 09-25"', 'trade quote ES NQ --json'))
    .action(async (instruments: string[], options) => {
      const { runQuote } = await import('./commands/quote.js');
      await runQuote(ctx, instruments, options);
    });

  program
    .command('executions')
    .summary("An account's recent fills")
    .description("List an account's executions (GetExecutions) of the last --lookback seconds (default 320, at most 900), oldest first.")
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config, said on stderr)')
    .option('--all-accounts', "every account's executions (GetExecutions of each account)")
    .option('--lookback <seconds>', 'how far back, 1 to 900 seconds (default 320)')
    .option('--json', "print the service's body: {\"executions\":[...]}")
    .addHelpText('after', examples('trade executions --account Sim101', 'trade executions --account Sim101 --lookback 900 --json', 'trade executions --all-accounts'))
    .action(async (options) => {
      const { runExecutions } = await import('./commands/executions.js');
      await runExecutions(ctx, options);
    });

  program
    .command('execution')
    .summary('Show one fill')
    .description('Show one execution (GetExecution) by its id.')
    .argument('<execution-id>', 'the id trade executions shows')
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config)')
    .option('--json', "print the service's body (the Execution object)")
    .addHelpText('after', examples('trade execution 550837ff9e784c2895ef6dab22d06be0 --account Sim101'))
    .action(async (executionId: string, options) => {
      const { runExecution } = await import('./commands/executions.js');
      await runExecution(ctx, executionId, options);
    });

  program
    .command('report')
    .summary('What the trading did: figures, trades, equity curve; --html for charts')
    .description(
      "Report the trades of one account or several over a window (default: the current trading day, from 17:00 Chicago): executions paired first-in first-out into trades, then net profit, gross profit and loss, win rate, profit factor, average and largest win and loss, average duration, maximum drawdown, the longest losing streak and a Sharpe ratio of daily returns, in money after commission, overall, per instrument and per trading day; open positions with their unrealized P&L apart. On embedded it reads the store; on http and ws the execution history trade keeps in the data directory (the service keeps executions for 900 s), brought up to date first.",
    )
    .option('--account <name>', 'the account (default: TRADE_ACCOUNT or the config, said on stderr; else every account)')
    .option('--all-accounts', 'every account, whatever the default')
    .option('--from <when>', 'start: a trading day (2025-09-03, from 17:00 Chicago the day before) or a time (2025-09-03T09:30, Chicago; or with Z or an offset)')
    .option('--to <when>', 'end: a trading day (to its 17:00 Chicago close) or a time (default: now)')
    .option('--days <n>', 'the last N trading days, the current one included (weekdays)')
    .option('--instrument <instrument>', 'only this instrument (any form, resolved as for place)')
    .option('--capital <amount>', 'the equity the curve starts from, for the drawdown percent and the Sharpe ratio (default 100000 per account)')
    .option('--json', 'print the report as one JSON object (the same numbers)')
    .option('--html <file>', 'also write a self-contained HTML page: summary, equity curve and drawdown, price charts with every entry and exit, the trades table')
    .option('--open', 'open the --html page in the default browser')
    .option('--follow', 'keep the report current: print it again at every new execution until Ctrl-C (--json: one object per line; --html: the file rewritten)')
    .addHelpText(
      'after',
      examples(
        'trade report --account Sim101',
        'trade report --all-accounts --days 5',
        'trade report --from 2025-09-02 --to 2025-09-03 --instrument ES --json',
        'trade report --account Sim101 --html report.html --open',
        'trade --backend ws report --follow',
      ),
    )
    .action(async (options) => {
      const { runReport } = await import('./commands/report.js');
      await runReport(ctx, options);
    });

  program
    .command('account')
    .summary("One account's money: cash, net liquidation, P&L")
    .description("Show one account (GetAccount): cash, net liquidation, realized P&L of the trading day, unrealized P&L, buying power and status. With --watermarks, its P&L high-water marks (GetWatermarks).")
    .argument('[name]', 'the account (default: TRADE_ACCOUNT or the config)')
    .option('--watermarks', 'the P&L high-water marks instead')
    .option('--json', "print the service's body (the Account object)")
    .addHelpText('after', examples('trade account Sim101', 'trade account Sim101 --json', 'trade account Sim101 --watermarks'))
    .action(async (name: string | undefined, options) => {
      const { runAccount } = await import('./commands/accounts.js');
      await runAccount(ctx, name, options);
    });

  const accounts = program
    .command('accounts')
    .summary('List accounts (the default), snapshot them; add simulation accounts')
    .description("List the accounts with their money figures (ListAccounts), take a snapshot of every account and its positions (GetSnapshot), or add a simulation account to the embedded engine.")
    .addHelpText('after', examples('trade accounts list', 'trade accounts snapshot', 'trade accounts add Sim102'));
  accounts
    .command('list', { isDefault: true })
    .description('List every account with its cash, net liquidation, P&L and status (ListAccounts).')
    .option('--json', "print the service's body: {\"accounts\":[...],\"count\":N,\"success\":true}")
    .addHelpText('after', examples('trade accounts list', 'trade accounts list --json'))
    .action(async (options) => {
      const { runAccountsList } = await import('./commands/accounts.js');
      await runAccountsList(ctx, options);
    });
  accounts
    .command('snapshot')
    .description('Every account and its open positions at one moment (GetSnapshot).')
    .option('--json', "print the service's body: {\"type\":\"snapshot\",\"accounts\":[...],...}")
    .addHelpText('after', examples('trade accounts snapshot', 'trade accounts snapshot --json'))
    .action(async (options) => {
      const { runSnapshot } = await import('./commands/accounts.js');
      await runSnapshot(ctx, options);
    });
  accounts
    .command('add')
    .description('Add a simulation account to the embedded engine (names match in any case).')
    .argument('<name>', 'the new account name')
    .option('--json', 'print {"account":NAME,"success":true} on stdout')
    .addHelpText('after', examples('trade accounts add Sim102'))
    .action(async (name: string, options) => {
      const { runAccountsAdd } = await import('./commands/accounts.js');
      await runAccountsAdd(ctx, name, options);
    });

  const watch = program
    .command('watch')
    .summary('Stream quotes, P&L, order changes or executions until Ctrl-C')
    .description(
      "Print one line per update until Ctrl-C (SIGINT) or SIGTERM, which end it with exit 0. On ws the updates come from the service's WebSocket streams (orders are polled: the service has no order stream); on http they come from polling the read operations, at most 2 requests a second (the service allows 3); on embedded from the local store, seeing prices set by other processes within about 100 ms, no server needed. A lost connection ends it with exit 4.",
    )
    .addHelpText('after', examples('trade watch quotes ES NQ', 'trade watch pnl --interval 5000', 'trade watch orders --account Sim101 --json', 'trade watch executions --account Sim101'));
  watch
    .command('quotes')
    .summary('Quotes of instruments, a line each time one changes')
    .description(
      "One line per quote update of the instruments (marketData), starting with their quotes now; an instrument with no price is an error. On http a poll every second (GetQuote), printed only when a quote changed.",
    )
    .argument('<instrument...>', "one or more instruments: 'ES 09-25', ES, ES1!, ESU5")
    .option('--json', 'NDJSON: one Quote object per line')
    .addHelpText('after', examples('trade watch quotes "ES 09-25"', 'trade --backend ws watch quotes ES NQ --json'))
    .action(async (instruments: string[], options) => {
      const { runWatchQuotes } = await import('./commands/watch.js');
      await runWatchQuotes(ctx, instruments, options);
    });
  watch
    .command('pnl')
    .summary("Every account's P&L at an interval")
    .description(
      "One line per account per update: net liquidation, cash, realized and unrealized P&L, open positions (pnlUpdate). On http each update is ListAccounts and GetAllPositions, at most once a second.",
    )
    .option('--interval <ms>', 'milliseconds between updates, 250 to 60000 (default 1000)')
    .option('--json', 'NDJSON: one pnlUpdate event {"type":"pnlUpdate","epoch":...,"accounts":[...]} per line')
    .addHelpText('after', examples('trade watch pnl', 'trade --backend ws watch pnl --interval 250 --json'))
    .action(async (options) => {
      const { runWatchPnl } = await import('./commands/watch.js');
      await runWatchPnl(ctx, options);
    });
  watch
    .command('orders')
    .summary('Orders as they are placed, fill or are cancelled')
    .description(
      "The working orders now, then one line per order that is new or whose state, fill or prices changed, polling GetOrders (the day's orders): once a second on http and ws, on each change of the store on embedded.",
    )
    .option('--account <name>', 'only this account (default: TRADE_ACCOUNT or the config, else every account)')
    .option('--json', 'NDJSON: one Order object per line')
    .addHelpText('after', examples('trade watch orders', 'trade watch orders --account Sim101 --json'))
    .action(async (options) => {
      const { runWatchOrders } = await import('./commands/watch.js');
      await runWatchOrders(ctx, options);
    });
  watch
    .command('executions')
    .summary('Fills as they happen; keeps the execution history current')
    .description(
      "The executions of the last 900 s, then one line per new execution (fill), each once. On http and ws GetExecutions is polled once a second per account, and every execution read is kept in the execution history that trade report reads (the service keeps executions for 900 s only); on embedded the store's fills, on each change of it.",
    )
    .option('--account <name>', 'only this account (default: TRADE_ACCOUNT or the config, else every account)')
    .option('--all-accounts', 'every account, whatever the default')
    .option('--json', 'NDJSON: one Execution object per line')
    .addHelpText('after', examples('trade watch executions --account Sim101', 'trade --backend ws watch executions --all-accounts --json'))
    .action(async (options) => {
      const { runWatchExecutions } = await import('./commands/watch.js');
      await runWatchExecutions(ctx, options);
    });

  program
    .command('batch')
    .summary('Send many requests from NDJSON over one connection')
    .description(
      'Send many requests over one connection: NDJSON lines {"api":"PlaceOrder"|"ReversePosition"|"Cancel"|…,"args":{account,...},"id"?} in (any operation, by its WebSocket name), one {"line","id","status","data"} line out per input line, in order; lines are read, sent and answered as they arrive, and a line over 1 MiB or with a key given twice is refused. On http and ws, requests are paced to the service\'s budget (3/s, bursts of 20) and a line refused with 429 waits and is sent again.',
    )
    .argument('[file]', "NDJSON file, or '-' (the default) for stdin")
    .option('--concurrency <n>', 'requests in flight at once (default 64; on embedded the lines still run in their order, those in flight together sharing one commit)')
    .option('--rate <n>', 'requests per second, bursts of 20 (default: 3 on http and ws, none on embedded; 0: no pacing)')
    .option('--no-progress', 'no progress bar on stderr (it is shown only at a terminal)')
    .addHelpText(
      'after',
      examples(
        'trade batch orders.ndjson > results.ndjson',
        `echo '{"api":"PlaceOrder","id":"a1","args":{"account":"Sim101","instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}}' | trade batch -`,
        'trade --backend ws batch orders.ndjson --rate 0 --concurrency 256   # a local trade serve: no pacing',
      ),
    )
    .action(async (file: string | undefined, options) => {
      const { runBatch } = await import('./commands/batch.js');
      await runBatch(ctx, file, options);
    });

  program
    .command('alert')
    .summary('Run TradingView alert messages (the service\'s webhook language), or check them')
    .description(
      'Run TradingView alert messages, in the service\'s webhook language (key=...; command=PLACE; account=...; ...), as the operations they map to on the chosen backend, each order through the guard. MESSAGE is the text itself, \'-\' for stdin or a file, one message per blank-line-separated block. Options with no API field are applied here where that can be done faithfully (delay, cancel_after, brackets on market entries, relative prices, windows, the kill switch as the guard\'s halt, the rate limit in the guard\'s ledger) and refused where not (strategy_tag, a bracket on a limit entry): --webhook sends those to the service\'s own webhook. See README "TradingView alerts".',
    )
    .argument('<message>', "the message, '-' for stdin, or a file")
    .option('--check', 'parse and print what would be sent (the operations, their args, the options), or the exact error; send nothing')
    .option('--webhook', "post the text to the service's webhook URL (config webhook-url) instead; its answer is reported as received, not executed")
    .option('--json', 'one JSON line per message')
    .addHelpText(
      'after',
      examples(
        "trade alert --check 'key=x; command=PLACE; account=Sim101; instrument=ES1!; action=BUY; qty=1; order_type=MARKET; tif=DAY;'",
        "trade alert 'command=PLACE; account=Sim101; instrument=ES 09-25; action=BUY; qty=1; order_type=MARKET; tif=DAY; take_profit=8 ticks; stop_loss=-8 ticks;'",
        'trade alert alerts.txt --json',
        'trade alert --webhook - < strategy-lock.txt',
      ),
    )
    .action(async (message: string, options) => {
      const { runAlertCommand } = await import('./commands/alert.js');
      await runAlertCommand(ctx, message, options);
    });

  const config = program
    .command('config')
    .summary('Read and change the config for a --profile')
    .description('Read and change the config store (file mode 0600) for the chosen --profile.')
    .addHelpText('after', () => `${configKeysHelpText()}${examples(
      'trade config set base-url https://trading.example.com',
      'trade --profile live config set backend http',
      'trade config get account',
      'trade config list --json',
    )}`);
  config
    .command('set')
    .description('Set a key (the token is set with `trade login`, never on the command line).')
    .argument('<key>', 'base-url, ws-url, backend, account, timeout or webhook-url')
    .argument('<value>', 'the value; validated before it is saved')
    .addHelpText('after', examples('trade config set base-url https://trading.example.com', 'trade config set account Sim101'))
    .action(async (key: string, value: string) => {
      const { runConfigSet } = await import('./commands/config.js');
      await runConfigSet(ctx, key, value);
    });
  config
    .command('get')
    .description('Print the value in effect (flag > environment > config > default); exit 3 when unset.')
    .argument('<key>', 'a config key')
    .option('--show-token', 'print the token unmasked')
    .option('--json', 'print {"key","value","source"}')
    .addHelpText('after', examples('trade config get base-url', 'trade config get token --show-token'))
    .action(async (key: string, options) => {
      const { runConfigGet } = await import('./commands/config.js');
      await runConfigGet(ctx, key, options);
    });
  config
    .command('unset')
    .description('Remove a key from the profile.')
    .argument('<key>', 'a config key')
    .addHelpText('after', examples('trade config unset ws-url'))
    .action(async (key: string) => {
      const { runConfigUnset } = await import('./commands/config.js');
      await runConfigUnset(ctx, key);
    });
  config
    .command('list')
    .description('Show every key in effect, with where its value comes from.')
    .option('--show-token', 'print the token unmasked')
    .option('--json', 'print {"profile","path","values"}')
    .addHelpText('after', examples('trade config list', 'trade --profile live config list --json'))
    .action(async (options) => {
      const { runConfigList } = await import('./commands/config.js');
      await runConfigList(ctx, options);
    });
  config
    .command('path')
    .description("Print the config file's path.")
    .addHelpText('after', examples('trade config path'))
    .action(async () => {
      const { runConfigPath } = await import('./commands/config.js');
      runConfigPath(ctx);
    });

  program
    .command('login')
    .summary('Check the access token with the service and save it for a --profile')
    .description(
      "Save the access token for the chosen --profile, from a masked prompt or from stdin. The service is asked first (one authenticated read, as `trade auth status` does): a refused token is not saved (exit 3), and when the service cannot be asked nothing is saved either (exit 4) unless --no-verify. On embedded with no base URL there is nothing to ask, and the token is saved unchecked.",
    )
    .option('--token-stdin', 'read the token from stdin (for scripts)')
    .option('--no-verify', 'save the token without asking the service whether it takes it')
    .addHelpText(
      'after',
      examples('trade login', 'trade --profile live login --token-stdin < ~/.secrets/trade-token', 'trade --profile live login --no-verify'),
    )
    .action(async (options) => {
      const { runLogin } = await import('./commands/login.js');
      await runLogin(ctx, options);
    });

  program
    .command('logout')
    .summary("Remove the access token from a --profile")
    .description("Remove the chosen --profile's saved token from the config; says so when TRADE_TOKEN still gives one.")
    .addHelpText('after', examples('trade logout', 'trade --profile live logout'))
    .action(async () => {
      const { runLogout } = await import('./commands/auth.js');
      await runLogout(ctx);
    });

  const auth = program
    .command('auth')
    .summary('Show the token in effect and whether the service takes it')
    .description('Show the token in effect (masked) and where it comes from, and whether the service takes it.')
    .addHelpText('after', examples('trade auth status', 'trade --profile live auth status --json'));
  auth
    .command('status')
    .summary('The token in effect, where it comes from, and whether the service takes it')
    .description(
      "The token in effect, masked, and where it comes from (TRADE_TOKEN or the profile), the backend and base URL, and whether the service takes it: one authenticated read (GetAllPositions), waiting at most 5 seconds; nothing is placed. On embedded no token is needed and none is sent. Exit 0 when the token is taken (or not needed), 3 when none is set, no URL is set or the service refuses it, 4 when the service cannot be asked.",
    )
    .option('--json', 'print {"profile","backend","baseUrl","wsUrl","token","service"}')
    .addHelpText('after', examples('trade auth status', 'TRADE_BACKEND=http trade auth status --json'))
    .action(async (options) => {
      const { runAuthStatus } = await import('./commands/auth.js');
      await runAuthStatus(ctx, options);
    });

  program
    .command('completion')
    .summary('Print a shell completion script')
    .description('Print a shell completion script (commands, flags and their values) for bash, zsh or fish.')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      examples(
        'trade completion bash > ~/.local/share/bash-completion/completions/trade',
        'source <(trade completion zsh)',
        'trade completion fish > ~/.config/fish/completions/trade.fish',
      ),
    )
    .action(async (shell: string) => {
      const { runCompletion } = await import('./commands/completion.js');
      runCompletion(ctx, shell, program);
    });

  // Hidden: the completion scripts call it on every Tab; a person never needs to.
  program
    .command('__complete', { hidden: true })
    .description('Print the live values a completion script offers, one a line, from the embedded store and the config; no network.')
    .argument('<source>', LIVE_SOURCES.join(', '))
    .option('--account <name>', 'only the order ids of this account')
    .action(async (source: string, options) => {
      const { runComplete } = await import('./commands/complete.js');
      runComplete(ctx, source, options);
    });

  program
    .command('halt')
    .summary('Stop new orders from every trade process (the guard)')
    .description(
      'Put the profile (or one account) in HALTED: every new order from any trade process on this machine is refused (exit 6) until `trade resume`. Cancel, close, flatten and orders that only reduce a position still go through.',
    )
    .option('--account <name>', 'halt this account only (default: the whole profile)')
    .option('--reason <text>', 'why, shown with every refusal')
    .option('--reducing', 'REDUCING instead: orders that reduce a position and changes that add no size still pass')
    .option('--json', 'print {"halt":{...},"success":true} on stdout')
    .addHelpText('after', examples('trade halt --reason "runaway script"', 'trade halt --account Sim101 --reducing', 'trade resume'))
    .action(async (options) => {
      const { runHalt } = await import('./commands/guard.js');
      await runHalt(ctx, options);
    });
  program
    .command('resume')
    .summary('Lift a halt (and a daily-loss halt for the rest of the day)')
    .description('Lift the halt of the profile (or of one account, which also lifts its daily-loss halt for the rest of the trading day).')
    .option('--account <name>', 'resume this account (default: the whole profile)')
    .option('--json', 'print {"scope":...,"resumed":true,"success":true} on stdout')
    .addHelpText('after', examples('trade resume', 'trade resume --account Sim101'))
    .action(async (options) => {
      const { runResume } = await import('./commands/guard.js');
      await runResume(ctx, options);
    });
  const guard = program
    .command('guard')
    .summary("The guard's rules, state and a dry check")
    .description(
      'The guard stands in front of every order on every backend: rules set with `trade config set guard.RULE VALUE` (or TRADE_GUARD_RULE), a halt switch and a journal. See README "Guardrails".',
    )
    .addHelpText('after', examples('trade guard show', 'trade guard test --account Sim101 --instrument "ES 09-25" --action BUY --quantity 5 --order-type MARKET --tif DAY'));
  guard
    .command('show')
    .description('Print the rules in effect (and where each comes from), the state, the pace counters and the daily-loss limit.')
    .option('--json', 'print {"rules":{...},"halts":[...],"pace":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade guard show', 'trade guard show --json'))
    .action(async (options) => {
      const { runGuardShow } = await import('./commands/guard.js');
      await runGuardShow(ctx, options);
    });
  guard
    .command('test')
    .description('Say what the guard would do with an order, sending nothing (positions and P&L are read where a rule needs them).')
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "'<SYMBOL> <MM-YY>' (ES 09-25) or another form")
    .option('--action <action>', 'BUY or SELL')
    .option('--quantity <n>', 'contracts')
    .option('--order-type <type>', 'MARKET, LIMIT, STOPMARKET or STOPLIMIT')
    .option('--tif <tif>', 'DAY or GTC')
    .option('--limit-price <price>', 'limit price')
    .option('--stop-price <price>', 'stop price')
    .option('--flatten-first', 'as place --flatten-first (FlatPlace)')
    .option('--json', 'print {"pass":false,"rule":...,"limit":...,"value":...} on stdout')
    .addHelpText('after', examples('trade guard test --account Sim101 --instrument "ES 09-25" --action BUY --quantity 50 --order-type MARKET --tif DAY'))
    .action(async (options) => {
      const { runGuardTest } = await import('./commands/guard.js');
      await runGuardTest(ctx, options);
    });
  guard
    .command('init')
    .description(
      "Create the guard's ledger, or migrate it to this trade's schema: once for a desk's PostgreSQL ledger (guard.ledger postgres://…), from any machine; safe to run again and from two machines at once. See docs/desk-mode.md.",
    )
    .option('--json', 'print {"ledger":...,"schemaVersion":N,"from":N,"success":true} on stdout')
    .addHelpText(
      'after',
      examples("trade config set guard.ledger 'postgres://trade@db.desk.example:5432/desk?sslmode=verify-full' && trade guard init", 'trade guard init --json'),
    )
    .action(async (options) => {
      const { runGuardInit } = await import('./commands/guard.js');
      await runGuardInit(ctx, options);
    });
  guard
    .command('reset')
    .description("Move the guard's ledger aside (its pace counts, halts and journal start again empty): what to do when it is damaged.")
    .option('--json', 'print {"movedTo":...,"success":true} on stdout')
    .addHelpText('after', examples('trade guard reset'))
    .action(async (options) => {
      const { runGuardReset } = await import('./commands/guard.js');
      await runGuardReset(ctx, options);
    });
  program
    .command('history')
    .summary("The guard's journal: every money-moving request and its outcome")
    .description('List the journal: every request that moved money (or was refused by a rule), from every trade process, with its outcome.')
    .option('--since <when>', 'only from this long ago (1h, 30m, 2d) or this ISO time')
    .option('--account <name>', 'only this account')
    .option('--unknown', 'only requests whose outcome is unknown (a network failure, or a process killed after sending)')
    .option('--refused', 'only requests refused before anything was sent: by a guard rule, the account lock, an MCP tier or the CLI, with who asked and what')
    .option('--json', 'print {"entries":[...],"count":N,"success":true} on stdout')
    .addHelpText('after', examples('trade history --since 1h', 'trade history --unknown', 'trade history --refused --since 1d', 'trade history --account Sim101 --json'))
    .action(async (options) => {
      const { runHistory } = await import('./commands/guard.js');
      await runHistory(ctx, options);
    });
  program
    .command('reconcile')
    .summary('Ask the backend what became of each request whose outcome is unknown')
    .description('For each journaled request whose outcome is unknown, ask the backend (GetOrderStatus by the client order id that was sent) and record the answer.')
    .option('--json', 'print {"reconciled":[...],"count":N,"success":true} on stdout')
    .addHelpText('after', examples('trade reconcile', 'trade history --unknown'))
    .action(async (options) => {
      const { runReconcile } = await import('./commands/guard.js');
      await runReconcile(ctx, options);
    });

  program
    .command('doctor')
    .summary('Check the set-up: backend, config, data, token, service')
    .description(
      'Show the backend that would be used and where that choice comes from, where config and data live, whether a token is set (masked), the embedded store\'s schema and contents, and for http or ws whether the service answers and takes the token (one authenticated read, GetAllPositions, over HTTP or as a WebSocket RPC: nothing is placed). Exit 0 when every check passes, 3 for a config or token problem, 4 when the service is unreachable or its trading platform is not connected, 1 when the store cannot be used.',
    )
    .option('--json', 'print the report as one JSON object')
    .addHelpText(
      'after',
      examples('trade doctor', 'trade --profile live doctor', 'TRADE_BACKEND=ws trade doctor --json'),
    )
    .action(async (options) => {
      const { runDoctor } = await import('./commands/doctor.js');
      await runDoctor(ctx, options);
    });

  program
    .command('serve')
    .summary("Serve the service's API over the embedded engine")
    .description(
      "Serve the order service's HTTP and WebSocket API over the embedded engine, for curl, scripts and bots. Every request needs 'Authorization: Bearer <token>', except the TradingView webhook (POST /v1/send/ID/SECRET, README \"TradingView alerts\"), whose text messages carry the token as their key= field.",
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '8080')
    .option('--token-file <file>', 'read the bearer token from this file (else TRADE_SERVE_TOKEN, else a generated one)')
    .option('--rate-limit <rate>', 'refill rate of a token bucket, e.g. 180/min (per s, min or h); off by default')
    .option('--burst <n>', 'bucket size: requests allowed back to back (with --rate-limit; default 20)')
    .option('--max-connections <n>', 'HTTP and WebSocket connections open at once; more are closed as they arrive (default 2048)')
    .option('--log', 'one line per request on stderr')
    .option('--price-replay <file>', 'drive prices from a CSV or NDJSON file of ticks or bars while serving (as trade price replay)')
    .option('--price-instrument <instrument>', 'with --price-replay: the instrument of records that name none')
    .option('--speed <n>', "with --price-replay: times the file's pace (default 1); 0 or max: as fast as possible")
    .option('--price-from <time>', 'with --price-replay: replay only the records at or after this time')
    .option('--price-to <time>', 'with --price-replay: replay only the records before this time')
    .option('--price-paused', 'with --price-replay: start with the clock paused at the first record (trade sandbox clock resume or step moves it)')
    .option('--price-random <instrument>', 'drive a seeded random walk of this instrument while serving (as trade price random)')
    .option('--seed <n>', 'with --price-random: the seed (default: random, shown on the banner)')
    .option('--interval <ms>', 'with --price-random: milliseconds between steps (default 1000)')
    .option('--price-follow <instrument...>', "follow the service's live quotes of these instruments while serving (as trade price follow), with this profile's URL and token")
    .option('--from <backend>', 'with --price-follow: http or ws (default ws)')
    .option('--scenario <file>', 'scenario rules (YAML or JSON) in force from the start: injected failures, see trade sandbox')
    .option('--log-size <n>', 'requests the request log keeps (trade sandbox log), default 10000')
    .option('--webhook <id/secret>', 'the TradingView webhook\'s address, POST /v1/send/ID/SECRET (default: random, shown on the banner); messages carry the token as key=')
    .addHelpText(
      'after',
      examples(
        'trade serve',
        'trade serve --webhook tv/9f8e7d6c5b4a3921   # TradingView alerts to http://127.0.0.1:8080/v1/send/tv/9f8e7d6c5b4a3921',
        'trade serve --port 0 --scenario lost-reply.yaml --log-size 1000',
        'TRADE_SERVE_TOKEN=s3cret trade serve --port 8080 --log',
        'trade serve --token-file ~/.trade-token --rate-limit 180/min --burst 20',
        'trade serve --price-random ES --seed 7 --interval 500',
        'trade serve --price-replay es-1min.csv --price-instrument ES --speed 60',
        `curl -X POST http://127.0.0.1:8080/v1/api/accounts/Sim101/orders/place -H "Content-Type: application/json" -H "Authorization: Bearer s3cret" -d '{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}'`,
      ),
    )
    .action(async (options) => {
      const { runServe } = await import('./commands/serve.js');
      await runServe(ctx, options);
    });

  const mcp = program
    .command('mcp')
    .summary('Serve the operations to AI agents over MCP, in tiers, behind the guard')
    .description(
      "Serve the order service's operations as Model Context Protocol tools for AI agents: over stdio (what a desktop agent starts), or with --http PORT over the streamable HTTP transport on 127.0.0.1, every request needing 'Authorization: Bearer <MCP token>' (the profile's MCP token, made by trade mcp token; the service token is refused). --tier read lists the reading operations only; paper adds the money-moving ones, sent only to the embedded engine or to simulation accounts (Sim*, guard.sim-accounts); trade adds live accounts and refuses to start unless the guard has max-order-qty and max-position set. Every money-moving call goes through the guard and its journal (source mcp): trade history shows what an agent did and was refused, trade halt stops it. A GuardStatus tool shows the rules, the state and the headroom.",
    )
    .option('--tier <tier>', 'what an agent may call: read, paper or trade', 'read')
    .option('--http <port>', 'serve the streamable HTTP transport on 127.0.0.1:PORT instead of stdio (0 picks a free port); needs an MCP token (trade mcp token)')
    .option('--account <name>', 'the account of the tools that take one when an agent gives none (default: TRADE_ACCOUNT, config)')
    .addHelpText(
      'after',
      examples(
        'trade mcp                                       # read-only tools over stdio',
        'trade mcp --tier paper --account Sim101         # and orders on the embedded engine',
        'trade --backend ws --profile live mcp --tier trade --account Live1',
        'trade mcp token                                 # the MCP token an agent sends over HTTP (shown once)',
        'trade mcp --tier paper --http 8765              # http://127.0.0.1:8765/mcp, MCP token required',
      ),
    )
    .action(async (options) => {
      const { runMcp } = await import('./commands/mcp.js');
      await runMcp(ctx, options);
    });
  mcp
    .command('token')
    .summary('Make the MCP token an agent sends to trade mcp --http (shown once)')
    .description(
      "Make the profile's MCP token: 256 random bits, printed once on stdout; only its hash is kept (mcp-tokens.json beside the config, mode 0600). trade mcp --http accepts this token and refuses the service token, so an agent never holds the key to the service itself. A profile that has one is refused (exit 2) unless --rotate, which replaces it: the old one stops working at once, also for a server that is running. --revoke removes it.",
    )
    .option('--rotate', 'replace the MCP token (the old one stops working)')
    .option('--revoke', 'remove the MCP token: trade mcp --http refuses every request until a new one is made')
    .option('--json', 'print {"profile","token","created","replaced","success":true} (with --revoke: {"profile","revoked","success":true})')
    .addHelpText('after', examples('trade mcp token', 'trade mcp token --rotate', 'trade --profile live mcp token --revoke', 'trade mcp token --json'))
    .action(async (options) => {
      const { runMcpToken } = await import('./commands/mcp.js');
      await runMcpToken(ctx, options);
    });

  const sandbox = program
    .command('sandbox')
    .summary('Drive a running trade serve as a test bench: inject failures, read its request log, save and restore its store, pause and step a replay')
    .description(
      "Talk to a running trade serve (the profile's base URL and token, or TRADE_BASE_URL and TRADE_TOKEN) over its control routes under /_sandbox/: scenario rules that make chosen requests fail the way the real service can (408, 429, 500, a lost reply, a late reject, a partial fill, a dropped WebSocket), the log of every request it received, snapshots of its store, and the session clock a replay drives (trade sandbox clock). See README \"Testing your scripts against trade serve\".",
    )
    .addHelpText(
      'after',
      examples(
        'trade sandbox inject drop-after --operation PlaceOrder --nth 2 --times 1',
        'trade sandbox log --operation PlaceOrder',
        'trade sandbox save clean && trade sandbox restore clean',
        'TRADE_BASE_URL=http://127.0.0.1:9000 TRADE_TOKEN=s3cret trade sandbox rules',
      ),
    );
  sandbox
    .command('inject')
    .description(
      'Add a scenario rule: requests it matches (--operation, --account, --instrument, --transport) get EFFECT on the nth matching call (--nth), every nth (--every), with a seeded probability (--probability, --seed), or always; --times N stops it after N. EFFECT: status 408|429|500 [RETRY_AFTER_S], delay DURATION, drop-before, drop-after, reject-late DURATION REASON, partial QTY, ws-close CODE [DURATION].',
    )
    .argument('<effect...>', 'the effect and its arguments, e.g. status 429, delay 2s, reject-late 500ms Insufficient margin')
    .option('--name <name>', 'a name for the rule (shown in the request log); default rule-N')
    .option('--operation <name>', "an operation of the table (PlaceOrder, Flatten, GetOrder, ...) or subscribe, unsubscribe, streamPnl")
    .option('--account <name>', 'only requests for this account')
    .option('--instrument <instrument>', 'only requests for this instrument (any form; matched as resolved)')
    .option('--transport <transport>', 'only http or only ws requests')
    .option('--nth <n>', 'fire on the nth matching call only')
    .option('--every <n>', 'fire on every nth matching call')
    .option('--probability <p>', 'fire with this probability, 0 to 1, from a seeded generator')
    .option('--seed <n>', 'with --probability: the seed (default 1): the same seed fires on the same calls')
    .option('--times <n>', 'fire at most this many times')
    .option('--json', 'print {"rule":{...},"success":true} on stdout')
    .addHelpText(
      'after',
      examples(
        'trade sandbox inject drop-after --operation PlaceOrder --nth 1 --times 1',
        'trade sandbox inject status 429 --operation PlaceOrder --every 3',
        'trade sandbox inject reject-late 500ms "Insufficient margin" --operation PlaceOrder --account Sim101',
        'trade sandbox inject partial 1 --operation PlaceOrder --transport ws',
        'trade sandbox inject ws-close 1011 --operation subscribe',
        'trade sandbox inject status 500 --probability 0.1 --seed 42',
      ),
    )
    .action(async (effect: string[], options) => {
      const { runSandboxInject } = await import('./commands/sandbox.js');
      await runSandboxInject(ctx, effect, options);
    });
  sandbox
    .command('rules')
    .description('List the scenario rules in force, with how many calls each matched and how often it fired.')
    .option('--json', 'print {"rules":[...],"count":N,"success":true} on stdout')
    .addHelpText('after', examples('trade sandbox rules', 'trade sandbox rules --json'))
    .action(async (options) => {
      const { runSandboxRules } = await import('./commands/sandbox.js');
      await runSandboxRules(ctx, options);
    });
  sandbox
    .command('clear')
    .description('Remove every scenario rule: every request is answered normally again.')
    .option('--json', 'print {"cleared":N,"success":true} on stdout')
    .addHelpText('after', examples('trade sandbox clear'))
    .action(async (options) => {
      const { runSandboxClear } = await import('./commands/sandbox.js');
      await runSandboxClear(ctx, options);
    });
  sandbox
    .command('log')
    .description(
      'Print the request log: every request the server received (the last --log-size of them), with time, transport, operation, account, body (never the token), status (dropped: no answer), the rule that fired and the time taken; then the counts per operation.',
    )
    .option('--operation <name>', 'only requests of this operation')
    .option('--json', 'print {"entries":[...],"counts":{...},"total":N,"size":N,"success":true} on stdout')
    .addHelpText('after', examples('trade sandbox log', 'trade sandbox log --operation PlaceOrder --json'))
    .action(async (options) => {
      const { runSandboxLog } = await import('./commands/sandbox.js');
      await runSandboxLog(ctx, options);
    });
  sandbox
    .command('alerts')
    .description(
      "Print the webhook's Alert History: every TradingView alert the server received on POST /v1/send/ID/SECRET (refused ones too), one row per account, with its status (success, pending, warning, failed), command, account, instrument, orders and error; the message's key is never shown.",
    )
    .option('--status <status>', 'only rows of this status: success, pending, warning or failed')
    .option('--limit <n>', 'only the last N rows (1 to 10000)')
    .option('--json', 'print {"alerts":[...],"count":N,"success":true} on stdout')
    .addHelpText('after', examples('trade sandbox alerts', 'trade sandbox alerts --status failed --json'))
    .action(async (options) => {
      const { runSandboxAlerts } = await import('./commands/sandbox.js');
      await runSandboxAlerts(ctx, options);
    });
  for (const [action, description] of [
    ['save', 'Snapshot the whole store (orders, positions, accounts, prices) as NAME, atomically, while the server runs; a file beside the store.'],
    ['restore', 'Replace the whole store with the snapshot NAME, atomically: no request sees half of it.'],
  ] as const) {
    sandbox
      .command(action)
      .description(description)
      .argument('<name>', 'the snapshot: 1-64 of A-Z a-z 0-9 . _ -')
      .option('--json', `print {"name":...,"file":...,"success":true} on stdout`)
      .addHelpText('after', examples(`trade sandbox ${action} clean`, `trade sandbox ${action} before-open --json`))
      .action(async (name: string, options) => {
        const { runSandboxSnapshot } = await import('./commands/sandbox.js');
        await runSandboxSnapshot(ctx, action, name, options);
      });
  }
  sandbox
    .command('reset')
    .description("Restore the empty default store (a new store's accounts and nothing else), atomically.")
    .option('--json', 'print {"success":true} on stdout')
    .addHelpText('after', examples('trade sandbox reset'))
    .action(async (options) => {
      const { runSandboxSnapshot } = await import('./commands/sandbox.js');
      await runSandboxSnapshot(ctx, 'reset', undefined, options);
    });
  sandbox
    .command('clock')
    .description(
      "Show or control the session clock a replay drives: on the embedded backend this machine's store's (a trade price replay, or a trade serve on it), on http or ws the trade serve's at the base URL. While a replay drives it, every timestamp, DAY expiry and guard window on the store follows the replayed time. pause holds the market still while a bot thinks; resume goes on; speed N sets times real time (max: as fast as possible); step N sets the next N records of the file, step 5m the next 5 minutes of replayed time (ms, s, m, h, d), then stays paused. With no replay running, the clock is the wall clock and only show answers.",
    )
    .argument('[action]', 'show (default), pause, resume, speed or step')
    .argument('[value]', 'speed: a number or max; step: a number of records, or a replayed time like 5m')
    .option('--json', 'print {"clock":{"time","epoch","replay","paused","speed","stepping","records","total","source","pid"},"success":true}')
    .addHelpText('after', examples('trade sandbox clock', 'trade sandbox clock pause', 'trade sandbox clock step 10', 'trade sandbox clock step 5m', 'trade sandbox clock speed 60', 'trade sandbox clock resume --json'))
    .action(async (action: string | undefined, value: string | undefined, options) => {
      const { runSandboxClock } = await import('./commands/sandbox.js');
      await runSandboxClock(ctx, action, value, options);
    });

  return program;
}

function configKeysHelpText(): string {
  const lines = CONFIG_KEYS.map((key) => `  ${key.padEnd(9)} ${KEY_HELP[key]} [${ENV_FOR[key]}]`);
  return `\nKeys:\n${lines.join('\n')}\n`;
}
