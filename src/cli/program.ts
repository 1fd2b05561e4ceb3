/**
 * The commander tree. Each action imports its command file on demand, so `trade --help` loads
 * neither the engine nor the schema.
 */
import { Command, Option } from 'commander';
import { VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import type { Io } from './io.js';

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

function addOrderOptions(command: Command): Command {
  return command
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "instrument as '<SYMBOL> <MM-YY>', e.g. 'ES 09-25'")
    .option('--action <action>', 'BUY or SELL (any case)')
    .option('--quantity <n>', 'contracts, a whole number from 1')
    .option('--order-type <type>', 'MARKET, LIMIT, STOPMARKET or STOPLIMIT (any case)')
    .option('--tif <tif>', 'time in force: DAY or GTC (alias --time-in-force)')
    .addOption(new Option('--time-in-force <tif>').hideHelp())
    .option('--limit-price <price>', 'limit price, for LIMIT and STOPLIMIT')
    .option('--stop-price <price>', 'stop price, for STOPMARKET and STOPLIMIT')
    .option('--oco-id <id>', 'OCO group id: orders sharing it cancel each other')
    .option('--strategy <name>', 'ATM strategy template name')
    .option('--json', 'print the service response body as JSON on stdout');
}

export function buildProgram(ctx: CommandContext, io: Io): Command {
  const program = new Command('trade')
    .description('Place orders and reverse positions on trading accounts, from scripts or a terminal.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(io.errColor.red(s)),
    })
    .addHelpText(
      'after',
      examples(
        `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
        `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
        'trade positions --account Sim101',
      ),
    );

  addOrderOptions(
    program
      .command('place')
      .description('Place an order (Place Order). Every required flag must be given.')
      .addHelpText(
        'after',
        examples(
          `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
          `trade place --account Sim101 --instrument "NQ 12-25" --action sell --quantity 2 --order-type limit --limit-price 21000.25 --tif gtc --json`,
        ),
      ),
  ).action(async (options) => {
    const { runPlace } = await import('./commands/place.js');
    await runPlace(ctx, options);
  });

  addOrderOptions(
    program
      .command('reverse')
      .description(
        'Reverse a position (Reverse Position): cancel the working orders in the instrument, close the position, then place the new order. Fails, changing nothing, when no position is open.',
      )
      .addHelpText(
        'after',
        examples(
          `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
        ),
      ),
  ).action(async (options) => {
    const { runReverse } = await import('./commands/reverse.js');
    await runReverse(ctx, options);
  });

  program
    .command('positions')
    .description('List open positions (net per account and instrument).')
    .option('--account <name>', 'only this account')
    .option('--instrument <instrument>', 'only this instrument')
    .option('--json', 'print {"positions":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade positions', 'trade positions --account Sim101 --json'))
    .action(async (options) => {
      const { runPositions } = await import('./commands/positions.js');
      await runPositions(ctx, options);
    });

  program
    .command('orders')
    .description('List orders, oldest first, with their state and fills.')
    .option('--account <name>', 'only this account')
    .option('--instrument <instrument>', 'only this instrument')
    .option('--json', 'print {"orders":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade orders --account Sim101', 'trade orders --json'))
    .action(async (options) => {
      const { runOrders } = await import('./commands/orders.js');
      await runOrders(ctx, options);
    });

  const accounts = program
    .command('accounts')
    .description('Manage the simulation accounts of the embedded engine.')
    .addHelpText('after', examples('trade accounts list', 'trade accounts add Sim102'));
  accounts
    .command('list')
    .description('List the simulation accounts.')
    .option('--json', 'print {"accounts":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade accounts list --json'))
    .action(async (options) => {
      const { runAccountsList } = await import('./commands/accounts.js');
      await runAccountsList(ctx, options);
    });
  accounts
    .command('add')
    .description('Add a simulation account (names match in any case).')
    .argument('<name>', 'the new account name')
    .option('--json', 'print {"account":NAME,"success":true} on stdout')
    .addHelpText('after', examples('trade accounts add Sim102'))
    .action(async (name: string, options) => {
      const { runAccountsAdd } = await import('./commands/accounts.js');
      await runAccountsAdd(ctx, name, options);
    });

  program
    .command('serve')
    .description(
      "Serve the order service's HTTP and WebSocket API over the embedded engine, for curl, scripts and bots. Every request needs 'Authorization: Bearer <token>'.",
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '8080')
    .option('--token-file <file>', 'read the bearer token from this file (else TRADE_SERVE_TOKEN, else a generated one)')
    .option('--rate-limit <rate>', 'refill rate of a token bucket, e.g. 180/min (per s, min or h); off by default')
    .option('--burst <n>', 'bucket size: requests allowed back to back (with --rate-limit; default 20)')
    .option('--log', 'one line per request on stderr')
    .addHelpText(
      'after',
      examples(
        'trade serve',
        'TRADE_SERVE_TOKEN=s3cret trade serve --port 8080 --log',
        'trade serve --token-file ~/.trade-token --rate-limit 180/min --burst 20',
        `curl -X POST http://127.0.0.1:8080/v1/api/accounts/Sim101/orders/place -H "Content-Type: application/json" -H "Authorization: Bearer s3cret" -d '{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}'`,
      ),
    )
    .action(async (options) => {
      const { runServe } = await import('./commands/serve.js');
      await runServe(ctx, options);
    });

  return program;
}
