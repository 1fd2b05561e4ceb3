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
    .option('--json', 'print the service response body as JSON on stdout')
    .option('-y, --yes', 'send without the confirm that follows the prompts')
    .option('-i, --interactive', 'at a terminal, ask every field (flag values as defaults) and confirm')
    .option('--no-input', 'never prompt: missing flags are an error (as when stdin is not a terminal)');
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
          'trade reverse --account Sim101           # at a terminal: asks for the rest, then confirms',
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

  return program;
}
