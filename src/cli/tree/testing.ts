/**
 * Testing and agents: trade serve, the sandbox that drives it, trade mcp.
 */
import type { CommandSpec } from './spec.js';

export const TESTING_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'serve',
    summary: "Serve the service's API over the embedded engine",
    description:
      "Serve the order service's HTTP and WebSocket API over the embedded engine, for curl, scripts and bots. Every request needs 'Authorization: Bearer <token>', except the TradingView webhook (POST /v1/send/ID/SECRET, docs/alerts.md), whose text messages carry the token as their key= field.",
    options: [
      { flags: '--host <host>', description: 'address to listen on', default: '127.0.0.1' },
      { flags: '--port <port>', description: 'port to listen on; 0 picks a free one', default: '8080' },
      { flags: '--token-file <file>', description: 'read the bearer token from this file (else TRADE_SERVE_TOKEN, else a generated one)' },
      { flags: '--rate-limit <rate>', description: 'refill rate of a token bucket, e.g. 180/min (per s, min or h); off by default' },
      { flags: '--burst <n>', description: 'bucket size: requests allowed back to back (with --rate-limit; default 20)' },
      { flags: '--max-connections <n>', description: 'HTTP and WebSocket connections open at once; more are closed as they arrive (default 2048)' },
      { flags: '--log', description: 'one line per request on stderr' },
      { flags: '--price-replay <file>', description: 'drive prices from a CSV or NDJSON file of ticks or bars while serving (as trade price replay)' },
      { flags: '--price-instrument <instrument>', description: 'with --price-replay: the instrument of records that name none' },
      { flags: '--speed <n>', description: "with --price-replay: times the file's pace (default 1); 0 or max: as fast as possible" },
      { flags: '--price-from <time>', description: 'with --price-replay: replay only the records at or after this time' },
      { flags: '--price-to <time>', description: 'with --price-replay: replay only the records before this time' },
      { flags: '--price-paused', description: 'with --price-replay: start with the clock paused at the first record (trade sandbox clock resume or step moves it)' },
      { flags: '--price-random <instrument>', description: 'drive a seeded random walk of this instrument while serving (as trade price random)' },
      { flags: '--seed <n>', description: 'with --price-random: the seed (default: random, shown on the banner)' },
      { flags: '--interval <ms>', description: 'with --price-random: milliseconds between steps (default 1000)' },
      { flags: '--price-follow <instrument...>', description: "follow the service's live quotes of these instruments while serving (as trade price follow), with this profile's URL and token" },
      { flags: '--from <backend>', description: 'with --price-follow: http or ws (default ws)' },
      { flags: '--scenario <file>', description: 'scenario rules (YAML or JSON) in force from the start: injected failures, see trade sandbox' },
      { flags: '--log-size <n>', description: 'requests the request log keeps (trade sandbox log), default 10000' },
      { flags: '--webhook <id/secret>', description: 'the TradingView webhook\'s address, POST /v1/send/ID/SECRET (default: random, shown on the banner); messages carry the token as key=' },
    ],
    examples: [
      'trade serve',
      'trade serve --webhook tv/9f8e7d6c5b4a3921   # TradingView alerts to http://127.0.0.1:8080/v1/send/tv/9f8e7d6c5b4a3921',
      'trade serve --port 0 --scenario lost-reply.yaml --log-size 1000',
      'TRADE_SERVE_TOKEN=s3cret trade serve --port 8080 --log',
      'trade serve --token-file ~/.trade-token --rate-limit 180/min --burst 20',
      'trade serve --price-random ES --seed 7 --interval 500',
      'trade serve --price-replay es-1min.csv --price-instrument ES --speed 60',
      `curl -X POST http://127.0.0.1:8080/v1/api/accounts/Sim101/orders/place -H "Content-Type: application/json" -H "Authorization: Bearer s3cret" -d '{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}'`,
    ],
    run: async (ctx, { options }) => {
      const { runServe } = await import('../commands/serve.js');
      await runServe(ctx, options);
    },
  },
  {
    name: 'sandbox',
    summary: 'Drive a running trade serve as a test bench: inject failures, read its request log, save and restore its store, pause and step a replay',
    description:
      "Talk to a running trade serve (the profile's base URL and token, or TRADE_BASE_URL and TRADE_TOKEN) over its control routes under /_sandbox/: scenario rules that make chosen requests fail the way the real service can (408, 429, 500, a lost reply, a late reject, a partial fill, a dropped WebSocket), the log of every request it received, snapshots of its store, and the session clock a replay drives (trade sandbox clock). See docs/serve.md.",
    examples: [
      'trade sandbox inject drop-after --operation PlaceOrder --nth 2 --times 1',
      'trade sandbox log --operation PlaceOrder',
      'trade sandbox save clean && trade sandbox restore clean',
      'TRADE_BASE_URL=http://127.0.0.1:9000 TRADE_TOKEN=s3cret trade sandbox rules',
    ],
    commands: [
      {
        name: 'inject',
        description:
          'Add a scenario rule: requests it matches (--operation, --account, --instrument, --transport) get EFFECT on the nth matching call (--nth), every nth (--every), with a seeded probability (--probability, --seed), or always; --times N stops it after N. EFFECT: status 408|429|500 [RETRY_AFTER_S], delay DURATION, drop-before, drop-after, reject-late DURATION REASON, partial QTY, ws-close CODE [DURATION].',
        arguments: [
          { name: '<effect...>', description: 'the effect and its arguments, e.g. status 429, delay 2s, reject-late 500ms Insufficient margin' },
        ],
        options: [
          { flags: '--name <name>', description: 'a name for the rule (shown in the request log); default rule-N' },
          { flags: '--operation <name>', description: "an operation of the table (PlaceOrder, Flatten, GetOrder, ...) or subscribe, unsubscribe, streamPnl" },
          { flags: '--account <name>', description: 'only requests for this account' },
          { flags: '--instrument <instrument>', description: 'only requests for this instrument (any form; matched as resolved)' },
          { flags: '--transport <transport>', description: 'only http or only ws requests' },
          { flags: '--nth <n>', description: 'fire on the nth matching call only' },
          { flags: '--every <n>', description: 'fire on every nth matching call' },
          { flags: '--probability <p>', description: 'fire with this probability, 0 to 1, from a seeded generator' },
          { flags: '--seed <n>', description: 'with --probability: the seed (default 1): the same seed fires on the same calls' },
          { flags: '--times <n>', description: 'fire at most this many times' },
          { flags: '--json', description: 'print {"rule":{...},"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox inject drop-after --operation PlaceOrder --nth 1 --times 1',
          'trade sandbox inject status 429 --operation PlaceOrder --every 3',
          'trade sandbox inject reject-late 500ms "Insufficient margin" --operation PlaceOrder --account Sim101',
          'trade sandbox inject partial 1 --operation PlaceOrder --transport ws',
          'trade sandbox inject ws-close 1011 --operation subscribe',
          'trade sandbox inject status 500 --probability 0.1 --seed 42',
        ],
        run: async (ctx, { args: [effect], options }) => {
          const { runSandboxInject } = await import('../commands/sandbox.js');
          await runSandboxInject(ctx, effect, options);
        },
      },
      {
        name: 'rules',
        description:
          'List the scenario rules in force, with how many calls each matched and how often it fired.',
        options: [
          { flags: '--json', description: 'print {"rules":[...],"count":N,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox rules',
          'trade sandbox rules --json',
        ],
        run: async (ctx, { options }) => {
          const { runSandboxRules } = await import('../commands/sandbox.js');
          await runSandboxRules(ctx, options);
        },
      },
      {
        name: 'clear',
        description:
          'Remove every scenario rule: every request is answered normally again.',
        options: [
          { flags: '--json', description: 'print {"cleared":N,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox clear',
        ],
        run: async (ctx, { options }) => {
          const { runSandboxClear } = await import('../commands/sandbox.js');
          await runSandboxClear(ctx, options);
        },
      },
      {
        name: 'log',
        description:
          'Print the request log: every request the server received (the last --log-size of them), with time, transport, operation, account, body (never the token), status (dropped: no answer), the rule that fired and the time taken; then the counts per operation.',
        options: [
          { flags: '--operation <name>', description: 'only requests of this operation' },
          { flags: '--json', description: 'print {"entries":[...],"counts":{...},"total":N,"size":N,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox log',
          'trade sandbox log --operation PlaceOrder --json',
        ],
        run: async (ctx, { options }) => {
          const { runSandboxLog } = await import('../commands/sandbox.js');
          await runSandboxLog(ctx, options);
        },
      },
      {
        name: 'alerts',
        description:
          "Print the webhook's Alert History: every TradingView alert the server received on POST /v1/send/ID/SECRET (refused ones too), one row per account, with its status (success, pending, warning, failed), command, account, instrument, orders and error; the message's key is never shown.",
        options: [
          { flags: '--status <status>', description: 'only rows of this status: success, pending, warning or failed' },
          { flags: '--limit <n>', description: 'only the last N rows (1 to 10000)' },
          { flags: '--json', description: 'print {"alerts":[...],"count":N,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox alerts',
          'trade sandbox alerts --status failed --json',
        ],
        run: async (ctx, { options }) => {
          const { runSandboxAlerts } = await import('../commands/sandbox.js');
          await runSandboxAlerts(ctx, options);
        },
      },
      {
        name: 'save',
        description:
          'Snapshot the whole store (orders, positions, accounts, prices) as NAME, atomically, while the server runs; a file beside the store.',
        arguments: [
          { name: '<name>', description: 'the snapshot: 1-64 of A-Z a-z 0-9 . _ -' },
        ],
        options: [
          { flags: '--json', description: 'print {"name":...,"file":...,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox save clean',
          'trade sandbox save before-open --json',
        ],
        run: async (ctx, { args: [name], options }) => {
          const { runSandboxSnapshot } = await import('../commands/sandbox.js');
          await runSandboxSnapshot(ctx, 'save', name, options);
        },
      },
      {
        name: 'restore',
        description:
          'Replace the whole store with the snapshot NAME, atomically: no request sees half of it.',
        arguments: [
          { name: '<name>', description: 'the snapshot: 1-64 of A-Z a-z 0-9 . _ -' },
        ],
        options: [
          { flags: '--json', description: 'print {"name":...,"file":...,"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox restore clean',
          'trade sandbox restore before-open --json',
        ],
        run: async (ctx, { args: [name], options }) => {
          const { runSandboxSnapshot } = await import('../commands/sandbox.js');
          await runSandboxSnapshot(ctx, 'restore', name, options);
        },
      },
      {
        name: 'reset',
        description:
          "Restore the empty default store (a new store's accounts and nothing else), atomically.",
        options: [
          { flags: '--json', description: 'print {"success":true} on stdout' },
        ],
        examples: [
          'trade sandbox reset',
        ],
        run: async (ctx, { options }) => {
          const { runSandboxSnapshot } = await import('../commands/sandbox.js');
          await runSandboxSnapshot(ctx, 'reset', undefined, options);
        },
      },
      {
        name: 'clock',
        description:
          "Show or control the session clock a replay drives: on the embedded backend this machine's store's (a trade price replay, or a trade serve on it), on http or ws the trade serve's at the base URL. While a replay drives it, every timestamp, DAY expiry and guard window on the store follows the replayed time. pause holds the market still while a bot thinks; resume goes on; speed N sets times real time (max: as fast as possible); step N sets the next N records of the file, step 5m the next 5 minutes of replayed time (ms, s, m, h, d), then stays paused. With no replay running, the clock is the wall clock and only show answers.",
        arguments: [
          { name: '[action]', description: 'show (default), pause, resume, speed or step' },
          { name: '[value]', description: 'speed: a number or max; step: a number of records, or a replayed time like 5m' },
        ],
        options: [
          { flags: '--json', description: 'print {"clock":{"time","epoch","replay","paused","speed","stepping","records","total","source","pid"},"success":true}' },
        ],
        examples: [
          'trade sandbox clock',
          'trade sandbox clock pause',
          'trade sandbox clock step 10',
          'trade sandbox clock step 5m',
          'trade sandbox clock speed 60',
          'trade sandbox clock resume --json',
        ],
        run: async (ctx, { args: [action, value], options }) => {
          const { runSandboxClock } = await import('../commands/sandbox.js');
          await runSandboxClock(ctx, action, value, options);
        },
      },
    ],
  },
  {
    name: 'mcp',
    summary: 'Serve the operations to AI agents over MCP, in tiers, behind the guard',
    description:
      "Serve the order service's operations as Model Context Protocol tools for AI agents: over stdio (what a desktop agent starts), or with --http PORT over the streamable HTTP transport on 127.0.0.1, every request needing 'Authorization: Bearer <MCP token>' (the profile's MCP token, made by trade mcp token; the service token is refused). --tier read lists the reading operations only; paper adds the money-moving ones, sent only to the embedded engine or to simulation accounts (Sim*, guard.sim-accounts); trade adds live accounts and refuses to start unless the guard has max-order-qty and max-position set. Every money-moving call goes through the guard and its journal (source mcp): trade history shows what an agent did and was refused, trade halt stops it. A GuardStatus tool shows the rules, the state and the headroom.",
    options: [
      { flags: '--tier <tier>', description: 'what an agent may call: read, paper or trade', default: 'read' },
      { flags: '--http <port>', description: 'serve the streamable HTTP transport on 127.0.0.1:PORT instead of stdio (0 picks a free port); needs an MCP token (trade mcp token)' },
      { flags: '--account <name>', description: 'the account of the tools that take one when an agent gives none (default: TRADE_ACCOUNT, config)' },
    ],
    examples: [
      'trade mcp                                       # read-only tools over stdio',
      'trade mcp --tier paper --account Sim101         # and orders on the embedded engine',
      'trade --backend ws --profile live mcp --tier trade --account Live1',
      'trade mcp token                                 # the MCP token an agent sends over HTTP (shown once)',
      'trade mcp --tier paper --http 8765              # http://127.0.0.1:8765/mcp, MCP token required',
    ],
    run: async (ctx, { options }) => {
      const { runMcp } = await import('../commands/mcp.js');
      await runMcp(ctx, options);
    },
    commands: [
      {
        name: 'token',
        summary: 'Make the MCP token an agent sends to trade mcp --http (shown once)',
        description:
          "Make the profile's MCP token: 256 random bits, printed once on stdout; only its hash is kept (mcp-tokens.json beside the config, mode 0600). trade mcp --http accepts this token and refuses the service token, so an agent never holds the key to the service itself. A profile that has one is refused (exit 2) unless --rotate, which replaces it: the old one stops working at once, also for a server that is running. --revoke removes it.",
        options: [
          { flags: '--rotate', description: 'replace the MCP token (the old one stops working)' },
          { flags: '--revoke', description: 'remove the MCP token: trade mcp --http refuses every request until a new one is made' },
          { flags: '--json', description: 'print {"profile","token","created","replaced","success":true} (with --revoke: {"profile","revoked","success":true})' },
        ],
        examples: [
          'trade mcp token',
          'trade mcp token --rotate',
          'trade --profile live mcp token --revoke',
          'trade mcp token --json',
        ],
        run: async (ctx, { options }) => {
          const { runMcpToken } = await import('../commands/mcp.js');
          await runMcpToken(ctx, options);
        },
      },
    ],
  },
];
