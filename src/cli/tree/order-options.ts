/** The flags that describe one order: place, reverse and replace take them all. */
import type { OptionSpec } from './spec.js';

export const ORDER_OPTIONS: readonly OptionSpec[] = [
  { flags: '--account <name>', description: 'account name, e.g. Sim101' },
  { flags: '--instrument <instrument>', description: "'<SYMBOL> <MM-YY>' (ES 09-25), or ES, ES1!, ESU5, ESU25, 'ES SEP25' (resolved to a dated contract)" },
  { flags: '--action <action>', description: 'BUY or SELL (any case)' },
  { flags: '--quantity <n>', description: 'contracts, a whole number from 1' },
  { flags: '--order-type <type>', description: 'MARKET, LIMIT, STOPMARKET or STOPLIMIT (any case)' },
  { flags: '--tif <tif>', description: 'time in force: DAY or GTC (alias --time-in-force)' },
  { flags: '--time-in-force <tif>', description: 'the same as --tif', hidden: true },
  { flags: '--limit-price <price>', description: 'limit price, for LIMIT and STOPLIMIT' },
  { flags: '--stop-price <price>', description: 'stop price, for STOPMARKET and STOPLIMIT' },
  { flags: '--oco-id <id>', description: 'OCO group id: orders sharing it cancel each other' },
  { flags: '--strategy <name>', description: 'ATM strategy template name' },
  {
    flags: '--order-id <id>',
    description: "your own id for the order (1-64 of A-Z a-z 0-9 . _ : -): a second order with it is refused, so a resend after 'outcome unknown' is safe",
  },
  { flags: '--dry-run', description: 'print exactly what would be sent (token masked) and send nothing; never prompts' },
  { flags: '--json', description: 'print the service response body as JSON on stdout' },
  { flags: '-y, --yes', description: 'send without the confirm that follows the prompts' },
  { flags: '-i, --interactive', description: 'at a terminal, ask every field (flag values as defaults) and confirm' },
  { flags: '--no-input', description: 'never prompt: missing flags are an error (as when stdin is not a terminal)' },
];
