/**
 * The interactive side of `place` and `reverse`: when to ask, what to ask in which order, and the
 * last look before sending. Typed answers are checked by the order schema (fieldError), so a
 * refused value reads exactly as it would for the flag, and against everything else known by
 * then: a price against the tick of the instrument's root, a quantity against the guard's
 * max-order-qty. A mistake is caught where it is typed, not after the confirm. Inquirer itself
 * lives in prompts.ts and is loaded only when a question is really asked.
 */
import type { Backend } from '../backends/types.js';
import { CancelledError, UsageError } from '../common/errors.js';
import {
  ACTIONS, NEEDS_LIMIT, NEEDS_STOP, ORDER_TYPES, TIMES_IN_FORCE,
  describeOrder, fieldError, parseInstrument, splitOrder, type Order, type OrderType,
} from '../service/order.js';
import { offTickReason } from '../service/ticks.js';
import { FLAG_FOR, numberOrText, type OrderDraft } from './order-flags.js';
import type { CommandContext } from './context.js';
import type { Io } from './io.js';
import type { Prompter } from './prompts.js';

export interface PromptFlags {
  /** -i/--interactive: ask every field (flag values as defaults), then confirm. */
  interactive?: boolean;
  /** false with --no-input: never ask. */
  input?: boolean;
  /** -y/--yes: send without the confirm. */
  yes?: boolean;
}

/** none: flags only. fill: ask what the flags left out. review: ask everything, flags as defaults. */
export type PromptMode = 'none' | 'fill' | 'review';

/** A person can answer only when both stdin and stderr (where prompts are drawn) are terminals. */
export function atTerminal(io: Io): boolean {
  return Boolean(io.stdin.isTTY && io.stderr.isTTY);
}

export function promptMode(io: Io, flags: PromptFlags, missingCount: number): PromptMode {
  if (flags.interactive) {
    if (flags.input === false)
      throw new UsageError('--interactive and --no-input contradict each other; give one of them', { hint: 'Nothing was sent.' });
    if (!atTerminal(io))
      throw new UsageError('--interactive needs a terminal: stdin and stderr must both be terminals', {
        hint: 'Nothing was sent. Give every order flag instead.',
      });
    return 'review';
  }
  return flags.input === false || missingCount === 0 || !atTerminal(io) ? 'none' : 'fill';
}

/** An empty answer means "not given", so the schema says "is required" rather than "got ''". */
const given = (text: string): string | undefined => (text === '' ? undefined : text);

export interface AskOptions {
  review: boolean;
  defaultAccount?: string;
  /** The backend's accounts (ListAccounts), offered as a list; undefined or empty: a typed name. */
  accounts?: string[];
  /**
   * The ATM store's templates, offered as a list when reviewing; undefined (a remote backend, or
   * the store could not be read): a typed name; empty: nothing to pick, so not asked.
   */
  templates?: string[];
  /** The last price of a dated contract, shown beside the price questions; undefined: none known. */
  lastPrice?: (instrument: string) => Promise<number | undefined>;
  /** The guard's max-order-qty in effect, and where it is set: a larger quantity is refused as it is typed. */
  maxQuantity?: { limit: number; source: string };
}

/** The entry of a list that matches `wanted` in any case (account and template names are case-blind). */
export function listed(names: readonly string[], wanted: string | undefined): string | undefined {
  if (wanted === undefined) return undefined;
  const lower = wanted.toLowerCase();
  return names.find((n) => n.toLowerCase() === lower);
}

const upper = (value: unknown): string | undefined => (typeof value === 'string' ? value.toUpperCase() : undefined);
const text = (value: unknown): string | undefined => (value === undefined ? undefined : String(value));

/**
 * Asks, in a trader's order, for every required field the draft (flags and the configured
 * account) leaves out, or for every field when reviewing (-i): the optional OCO group and ATM
 * strategy only then. Each typed answer is checked by the schema as it is given. Returns the
 * completed draft; the schema still has the last word.
 */
export async function promptDraft(prompter: Prompter, flags: OrderDraft, options: AskOptions): Promise<OrderDraft> {
  const draft: OrderDraft = { ...flags };
  const ask = (field: keyof Order) => options.review || flags[field] === undefined;

  if (ask('account')) {
    const preferred = text(flags.account) ?? options.defaultAccount;
    if (options.accounts && options.accounts.length > 0) {
      draft.account = await prompter.select({
        message: 'Account',
        choices: options.accounts.map((a) => ({ value: a })),
        default: listed(options.accounts, preferred),
      });
    } else {
      draft.account = await prompter.text({
        message: 'Account',
        default: preferred,
        validate: (v) => fieldError('account', given(v)),
      });
    }
  }
  if (ask('instrument')) {
    draft.instrument = await prompter.text({
      message: 'Instrument (e.g. ES 09-25)',
      default: text(flags.instrument),
      validate: (v) => fieldError('instrument', given(v)),
    });
  }
  if (ask('action')) {
    draft.action = await prompter.select({ message: 'Action', choices: ACTIONS.map((value) => ({ value })), default: upper(flags.action) });
  }
  if (ask('quantity')) {
    const answer = await prompter.text({
      message: 'Quantity (contracts)',
      default: text(flags.quantity),
      validate: (v) => fieldError('quantity', numberOrText(given(v))) ?? aboveGuard(numberOrText(given(v)), options.maxQuantity),
    });
    draft.quantity = numberOrText(answer);
  }

  // A price given as a flag stays; only the order types that use it can be picked.
  const fixedLimit = !options.review && flags.limitPrice !== undefined;
  const fixedStop = !options.review && flags.stopPrice !== undefined;
  let type = upper(flags.orderType) as OrderType;
  if (ask('orderType')) {
    const choices = ORDER_TYPES.map((value) => {
      const refuses = [
        fixedLimit && !NEEDS_LIMIT.has(value) ? FLAG_FOR.limitPrice : undefined,
        fixedStop && !NEEDS_STOP.has(value) ? FLAG_FOR.stopPrice : undefined,
      ].filter(Boolean);
      return { value, disabled: refuses.length > 0 ? `(does not use ${refuses.join(' or ')})` : undefined };
    });
    type = await prompter.select({
      message: 'Order type',
      choices,
      default: (upper(flags.orderType) as OrderType | undefined) ?? choices.find((c) => !c.disabled)?.value,
    });
    draft.orderType = type;
  }
  // The dated contract the prices are for (its root's tick), and its last price, read once.
  const instrument = resolved(draft.instrument);
  let last: Promise<number | undefined> | undefined;
  for (const [field, needs, label] of [
    ['limitPrice', NEEDS_LIMIT, 'Limit price'],
    ['stopPrice', NEEDS_STOP, 'Stop price'],
  ] as const) {
    if (!needs.has(type)) {
      // Reviewing, the person may pick a type that does not use a flag's price: it is dropped.
      if (options.review) delete draft[field];
      continue;
    }
    if (!ask(field)) continue;
    last ??= instrument && options.lastPrice ? options.lastPrice(instrument).catch(() => undefined) : Promise.resolve(undefined);
    const hint = await last;
    const answer = await prompter.text({
      message: hint === undefined ? label : `${label} (last ${hint})`,
      default: text(flags[field]),
      validate: (v) => {
        const value = numberOrText(given(v));
        return fieldError(field, value, type) ?? (instrument && typeof value === 'number' ? offTickReason(instrument, value) : undefined);
      },
    });
    draft[field] = numberOrText(answer);
  }
  if (ask('timeInForce')) {
    draft.timeInForce = await prompter.select({
      message: 'Time in force',
      choices: TIMES_IN_FORCE.map((value) => ({ value, name: value === 'DAY' ? 'DAY (until the session ends)' : 'GTC (good till cancelled)' })),
      default: upper(flags.timeInForce),
    });
  }
  if (!options.review) return draft;
  const oco = await prompter.text({
    message: 'OCO group id (Enter skips)',
    default: text(flags.ocoId),
    validate: (v) => (v === '' ? undefined : fieldError('ocoId', v)),
  });
  if (oco === '') delete draft.ocoId;
  else draft.ocoId = oco;
  const strategy = await askStrategy(prompter, text(flags.strategy), options.templates);
  if (strategy === undefined) delete draft.strategy;
  else draft.strategy = strategy;
  return draft;
}

/** The dated contract an instrument's text resolves to, or undefined when it resolves to none. */
function resolved(instrument: unknown): string | undefined {
  try {
    return typeof instrument === 'string' ? parseInstrument(instrument) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a quantity the guard would refuse is refused now, naming the rule and where it is set. */
function aboveGuard(quantity: unknown, max: AskOptions['maxQuantity']): string | undefined {
  if (max === undefined || typeof quantity !== 'number' || quantity <= max.limit) return undefined;
  return `${quantity} is above the guard's max-order-qty of ${max.limit} (${max.source}): the guard would refuse it`;
}

/** The ATM template: picked from the store's list, or typed (checked by the schema) when there is no list. */
async function askStrategy(prompter: Prompter, given: string | undefined, templates: string[] | undefined): Promise<string | undefined> {
  if (templates === undefined) {
    const answer = await prompter.text({
      message: 'ATM strategy (Enter skips)',
      default: given,
      validate: (v) => (v === '' ? undefined : fieldError('strategy', v)),
    });
    return answer === '' ? undefined : answer;
  }
  // An empty store has nothing to pick (a --strategy was refused before any question).
  if (templates.length === 0) return undefined;
  const answer = await prompter.select({
    message: 'ATM strategy',
    choices: [{ value: '', name: '(none)' }, ...templates.map((value) => ({ value }))],
    default: listed(templates, given) ?? '',
  });
  return answer === '' ? undefined : answer;
}

/** The one line a person checks before sending: the whole order, the account, where it goes. */
export function summaryLine(kind: 'place' | 'reverse' | 'replace', order: Order, backendLabel: string): string {
  const { account, body } = splitOrder(order);
  const what = kind === 'reverse' ? `close ${body.instrument}, then ${describeOrder(body)}` : describeOrder(body);
  const verb = { place: 'Place', reverse: 'Reverse', replace: 'Replace with' }[kind];
  return `${verb}: ${what} · account ${account} · ${backendLabel}`;
}

/** Shows the summary and asks to send: Yes by default on the simulation, No where money is real. */
export async function confirmOrder(
  ctx: CommandContext,
  prompter: Prompter,
  kind: 'place' | 'reverse' | 'replace',
  order: Order,
  backend: Backend,
): Promise<void> {
  ctx.io.err(summaryLine(kind, order, backend.label));
  const send = await prompter.confirm({
    message: { place: 'Send this order?', reverse: 'Close the position and send this order?', replace: 'Cancel the order and send this one?' }[kind],
    default: backend.name === 'embedded',
  });
  if (!send) throw new CancelledError();
}
