/**
 * Orders: place, change and cancel them, from flags, NDJSON or alert messages.
 */
import type { CommandSpec } from './spec.js';
import { ORDER_OPTIONS } from './order-options.js';

export const ORDER_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'place',
    summary: 'Place an order',
    description:
      'Place an order (Place Order). At a terminal, asks for the fields the flags leave out, then confirms; otherwise every required flag must be given.',
    options: [
      { flags: '--require-position <sides>', description: 'place only when the position in the instrument is one of these: flat, long, short (a comma list)' },
      { flags: '--max-positions <n>', description: 'refuse an order that opens a position when the account already has this many open' },
      { flags: '--flatten-first', description: "cancel the instrument's working orders and close its position first, then place (FlatPlace)" },
      ...ORDER_OPTIONS,
    ],
    examples: [
      `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
      `trade place --account Sim101 --instrument "NQ 12-25" --action sell --quantity 2 --order-type limit --limit-price 21000.25 --tif gtc --json`,
      'trade place                              # at a terminal: asks for each field, then confirms',
      `trade place -i --instrument "ES 09-25"   # asks every field, the flags as defaults`,
      `trade place --account Sim101 --instrument ES --action BUY --quantity 1 --order-type MARKET --tif DAY --order-id my-1 --require-position flat`,
      `trade place --account Sim101 --instrument "ES 09-25" --action SELL --quantity 2 --order-type MARKET --tif DAY --flatten-first`,
    ],
    run: async (ctx, { options }) => {
      const { runPlace } = await import('../commands/place.js');
      await runPlace(ctx, options);
    },
  },
  {
    name: 'reverse',
    summary: 'Reverse a position: close it, place a new order',
    description:
      'Reverse a position (ReversePosition): cancel the working orders in the instrument, close the position, then place the new order. With --invert (Reverse), turn it over at its own size instead. Fails, changing nothing, when no position is open.',
    options: [
      { flags: '--invert', description: 'turn the position over at its own size (Reverse): long 2 becomes short 2; takes only --account and --instrument' },
      { flags: '--same-side', description: "go on though the new order is on the position's own side (long and BUY): refused in a script without it, warned at a terminal" },
      ...ORDER_OPTIONS,
    ],
    examples: [
      `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
      'trade reverse --account Sim101           # at a terminal: asks for the rest, then confirms',
      `trade reverse --invert --account Sim101 --instrument "ES 09-25"`,
    ],
    run: async (ctx, { options }) => {
      const { runReverse } = await import('../commands/reverse.js');
      await runReverse(ctx, options);
    },
  },
  {
    name: 'modify',
    summary: "Change a working order's quantity, limit or stop",
    description:
      "Change a working order (Change): its quantity, limit price or stop price; what is not given stays as it is. The order keeps its id. A limit moved through the last price fills at once; a stop moved to the wrong side of it is refused.",
    arguments: [
      { name: '<order-id>', description: 'the working order (its id, or a unique prefix of it)' },
    ],
    options: [
      { flags: '--account <name>', description: 'the account the order is in (default: TRADE_ACCOUNT or the config)' },
      { flags: '--quantity <n>', description: 'new quantity, a whole number from 1' },
      { flags: '--limit-price <price>', description: 'new limit price (LIMIT and STOPLIMIT orders)' },
      { flags: '--stop-price <price>', description: 'new stop price (STOPMARKET and STOPLIMIT orders)' },
      { flags: '--json', description: "print the service's body: {\"orderId\":\"...\",\"success\":true}" },
    ],
    examples: [
      'trade modify 2ea6bcace215a4d965afa9907f5c88fd --account Sim101 --limit-price 4495.5',
      'trade modify my-order-1 --account Sim101 --quantity 3 --stop-price 4480',
    ],
    run: async (ctx, { args: [orderId], options }) => {
      const { runModify } = await import('../commands/modify.js');
      await runModify(ctx, orderId, options);
    },
  },
  {
    name: 'replace',
    summary: 'Cancel a working order and place another in one step',
    description:
      'Replace a working order (Replace): the new order the flags describe is checked first; then the old one is cancelled and the new one placed, both or neither. The new order gets an id of its own.',
    arguments: [
      { name: '<order-id>', description: 'the working order to replace (its id, or a unique prefix of it)' },
    ],
    options: [
      ...ORDER_OPTIONS,
    ],
    examples: [
      `trade replace 2ea6bcace215a4d965afa9907f5c88fd --account Sim101 --instrument "ES 09-25" --action BUY --quantity 2 --order-type LIMIT --limit-price 4490 --tif GTC`,
    ],
    run: async (ctx, { args: [orderId], options }) => {
      const { runReplace } = await import('../commands/replace.js');
      await runReplace(ctx, orderId, options);
    },
  },
  {
    name: 'cancel',
    summary: 'Cancel a working order, or all of them',
    description:
      "Cancel a working order (Cancel); orders in its OCO group are cancelled with it. A filled, cancelled, expired or unknown order is refused. With --all, every working order of the account (CancelOrders); with --all-accounts, of every account (CancelAllOrders); --instrument narrows either to one instrument.",
    arguments: [
      { name: '[order-id]', description: 'the id PlaceOrder returned (or your --order-id), or a unique prefix of it (at least 4 characters)' },
    ],
    options: [
      { flags: '--account <name>', description: 'the account the order is in (required by remote backends)' },
      { flags: '--all', description: "every working order of the account" },
      { flags: '--all-accounts', description: 'every working order of every account' },
      { flags: '--instrument <instrument>', description: 'with --all or --all-accounts: only this instrument' },
      { flags: '--json', description: "print the service's body: {\"orderId\":\"...\",\"success\":true}, or {\"orderIds\":[...],\"success\":true}" },
    ],
    examples: [
      'trade cancel 2ea6bcace215a4d965afa9907f5c88fd --account Sim101',
      'trade cancel --all --account Sim101 --instrument "ES 09-25"',
      'trade cancel --all-accounts --json',
    ],
    run: async (ctx, { args: [orderId], options }) => {
      const { runCancel } = await import('../commands/cancel.js');
      await runCancel(ctx, orderId, options);
    },
  },
  {
    name: 'bracket',
    summary: 'Protect a position with a take-profit and a stop-loss',
    description:
      "Cancel the instrument's working orders, then place a take-profit (LIMIT) and a stop-loss (STOPMARKET) on the other side, one cancelling the other (CancelAndBracket). --action is the side of the position protected: BUY protects a long. The size is clamped to the position; with no position the bracket is placed at --quantity.",
    options: [
      { flags: '--account <name>', description: 'account name, e.g. Sim101' },
      { flags: '--instrument <instrument>', description: "instrument: 'ES 09-25', or ES, ES1!, ESU5 (resolved to a dated contract)" },
      { flags: '--action <action>', description: 'BUY (protect a long) or SELL (protect a short)' },
      { flags: '--quantity <n>', description: 'contracts, a whole number from 1' },
      { flags: '--take-profit <price>', description: 'limit price of the target' },
      { flags: '--stop-loss <price>', description: 'stop price of the stop' },
      { flags: '--tif <tif>', description: 'DAY or GTC (default GTC)' },
      { flags: '--json', description: "print the service's body: {\"orderIds\":[...],\"cancelledOrderIds\":[...],\"ocoId\":\"...\",\"quantity\":N,\"success\":true}" },
    ],
    examples: [
      `trade bracket --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --take-profit 4510 --stop-loss 4490`,
    ],
    run: async (ctx, { options }) => {
      const { runBracket } = await import('../commands/bracket.js');
      await runBracket(ctx, options);
    },
  },
  {
    name: 'orders',
    summary: "List an account's orders",
    description:
      "List an account's orders, oldest first (the service's GetOrders): working ones and those of the current trading day, with their state and fills.",
    options: [
      { flags: '--account <name>', description: 'the account (default: TRADE_ACCOUNT or the config, said on stderr); this or --all-accounts is required' },
      { flags: '--all-accounts', description: "every account's orders (GetOrders of each account)" },
      { flags: '--instrument <instrument>', description: 'only this instrument (any form: ES 09-25, ES, ES1!, ESU5)' },
      { flags: '--active', description: 'working orders only' },
      { flags: '--json', description: "print the service's body: {\"orders\":[...],\"count\":N,\"success\":true}" },
    ],
    examples: [
      'trade orders --account Sim101',
      'trade orders --account Sim101 --active --json',
      'trade orders --all-accounts --active',
    ],
    run: async (ctx, { options }) => {
      const { runOrders } = await import('../commands/orders.js');
      await runOrders(ctx, options);
    },
  },
  {
    name: 'order',
    summary: 'Show one order, or only its state',
    description:
      "Show one order (GetOrder): its side, size, type, prices, state and fills. With --status, only its state (GetOrderStatus): the cheap call to poll, and the way to learn what became of an order whose outcome was unknown.",
    arguments: [
      { name: '<order-id>', description: 'the id PlaceOrder returned (or your --order-id), or a unique prefix of it (at least 4 characters)' },
    ],
    options: [
      { flags: '--account <name>', description: 'the account the order is in (default: TRADE_ACCOUNT or the config)' },
      { flags: '--status', description: 'only the state: Working, Filled, Cancelled, ...' },
      { flags: '--lifecycle', description: "the order's events (GetOrderLifecycle; the service's add-on 1.13.2+; not simulated by the embedded engine)" },
      { flags: '--json', description: "print the service's body (the Order object, or {\"status\":\"Filled\",...})" },
    ],
    examples: [
      'trade order 2ea6bcace215a4d965afa9907f5c88fd --account Sim101',
      'trade order my-order-1 --account Sim101 --status',
      'trade --backend http order my-order-1 --account Sim101 --lifecycle',
    ],
    run: async (ctx, { args: [orderId], options }) => {
      const { runOrder } = await import('../commands/order.js');
      await runOrder(ctx, orderId, options);
    },
  },
  {
    name: 'batch',
    summary: 'Send many requests from NDJSON over one connection',
    description:
      'Send many requests over one connection: NDJSON lines {"api":"PlaceOrder"|"ReversePosition"|"Cancel"|…,"args":{account,...},"id"?} in (any operation, by its WebSocket name), one {"line","id","status","data"} line out per input line, in order; lines are read, sent and answered as they arrive, and a line over 1 MiB or with a key given twice is refused. On http and ws, requests are paced to the service\'s budget (3/s, bursts of 20) and a line refused with 429 waits and is sent again.',
    arguments: [
      { name: '[file]', description: "NDJSON file, or '-' (the default) for stdin" },
    ],
    options: [
      { flags: '--concurrency <n>', description: 'requests in flight at once (default 64; on embedded the lines still run in their order, those in flight together sharing one commit)' },
      { flags: '--rate <n>', description: 'requests per second, bursts of 20 (default: 3 on http and ws, none on embedded; 0: no pacing)' },
      { flags: '--no-progress', description: 'no progress bar on stderr (it is shown only at a terminal)' },
    ],
    examples: [
      'trade batch orders.ndjson > results.ndjson',
      `echo '{"api":"PlaceOrder","id":"a1","args":{"account":"Sim101","instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}}' | trade batch -`,
      'trade --backend ws batch orders.ndjson --rate 0 --concurrency 256   # a local trade serve: no pacing',
    ],
    run: async (ctx, { args: [file], options }) => {
      const { runBatch } = await import('../commands/batch.js');
      await runBatch(ctx, file, options);
    },
  },
  {
    name: 'alert',
    summary: 'Run TradingView alert messages (the service\'s webhook language), or check them',
    description:
      'Run TradingView alert messages, in the service\'s webhook language (key=...; command=PLACE; account=...; ...), as the operations they map to on the chosen backend, each order through the guard. MESSAGE is the text itself, \'-\' for stdin or a file, one message per blank-line-separated block. Options with no API field are applied here where that can be done faithfully (delay, cancel_after, brackets on market entries, relative prices, windows, the kill switch as the guard\'s halt, the rate limit in the guard\'s ledger) and refused where not (strategy_tag, a bracket on a limit entry): --webhook sends those to the service\'s own webhook. See docs/alerts.md.',
    arguments: [
      { name: '<message>', description: "the message, '-' for stdin, or a file" },
    ],
    options: [
      { flags: '--check', description: 'parse and print what would be sent (the operations, their args, the options), or the exact error; send nothing' },
      { flags: '--webhook', description: "post the text to the service's webhook URL (config webhook-url) instead; its answer is reported as received, not executed" },
      { flags: '--json', description: 'one JSON line per message' },
    ],
    examples: [
      "trade alert --check 'key=x; command=PLACE; account=Sim101; instrument=ES1!; action=BUY; qty=1; order_type=MARKET; tif=DAY;'",
      "trade alert 'command=PLACE; account=Sim101; instrument=ES 09-25; action=BUY; qty=1; order_type=MARKET; tif=DAY; take_profit=8 ticks; stop_loss=-8 ticks;'",
      'trade alert alerts.txt --json',
      'trade alert --webhook - < strategy-lock.txt',
    ],
    run: async (ctx, { args: [message], options }) => {
      const { runAlertCommand } = await import('../commands/alert.js');
      await runAlertCommand(ctx, message, options);
    },
  },
];
