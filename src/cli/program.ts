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
        `trade price set "ES 09-25" 4500`,
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
    .command('cancel')
    .description(
      'Cancel a working order (Cancel). Orders in its OCO group are cancelled with it. A filled, cancelled, expired or unknown order is refused.',
    )
    .argument('<order-id>', 'the id Place Order returned')
    .option('--account <name>', 'the account the order is in (required by remote backends)')
    .option('--json', 'print {"orderId":"...","success":true} on stdout')
    .addHelpText(
      'after',
      examples('trade cancel 2ea6bcace215a4d965afa9907f5c88fd --account Sim101', 'trade cancel 2ea6bcace215a4d965afa9907f5c88fd --json'),
    )
    .action(async (orderId: string, options) => {
      const { runCancel } = await import('./commands/cancel.js');
      await runCancel(ctx, orderId, options);
    });

  program
    .command('close')
    .description(
      "Close a position (Close Position): cancel the instrument's working orders in the account, then flatten at market.",
    )
    .option('--account <name>', 'account name, e.g. Sim101')
    .option('--instrument <instrument>', "instrument as '<SYMBOL> <MM-YY>', e.g. 'ES 09-25'")
    .option('--json', 'print {"closedPositions":[...],"success":true} on stdout')
    .addHelpText('after', examples(`trade close --account Sim101 --instrument "ES 09-25"`, `trade close --account Sim101 --instrument "ES 09-25" --json`))
    .action(async (options) => {
      const { runClose } = await import('./commands/close.js');
      await runClose(ctx, options);
    });

  const price = program
    .command('price')
    .description('Set and list last prices on the embedded engine; a new price fills the working orders it crosses.')
    .addHelpText('after', examples(`trade price set "ES 09-25" 4500.25`, 'trade price list'));
  price
    .command('set')
    .description('Set the last price of an instrument and fill the working orders it crosses, oldest first.')
    .argument('<instrument>', "instrument as '<SYMBOL> <MM-YY>', e.g. 'ES 09-25'")
    .argument('<price>', 'a positive price')
    .option('--json', 'print the fills, cancellations and brackets as JSON on stdout')
    .addHelpText('after', examples(`trade price set "ES 09-25" 4500.25`, `trade price set "NQ 12-25" 21000 --json`))
    .action(async (instrument: string, value: string, options) => {
      const { runPriceSet } = await import('./commands/price.js');
      await runPriceSet(ctx, instrument, value, options);
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

  const atm = program
    .command('atm')
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
    .description('List open positions (net per account and instrument).')
    .option('--account <name>', 'only this account')
    .option('--instrument <instrument>', 'only this instrument')
    .option('--all', 'include flat positions, with the realized P&L of closed trades')
    .option('--json', 'print {"positions":[...],"success":true} on stdout')
    .addHelpText('after', examples('trade positions', 'trade positions --account Sim101 --json', 'trade positions --all'))
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
