/**
 * `trade mcp`'s tools, derived from the operation table (src/service/operations.ts): one tool per
 * row, named as the service names it, its input the row's fields (a strict object: a misspelt
 * field is an error, not an order sent without it), its description the row's summary and route.
 * A row is put in a tier by what the table says of it: an operation that moves money needs
 * `paper` or `trade`, a read needs only `read`. Nothing here loads the MCP SDK: the table walk in
 * the tests and the command's checks run without it.
 */
import * as z from 'zod';
import { accountNameField } from '../service/order.js';
import { type ArgsOf, OPERATION_NAMES, OPERATIONS, type OperationName, type OperationSpec, parseArgs } from '../service/operations.js';
import { TIERS, type Tier } from './tiers.js';

export { TIERS, type Tier };

/** The tool beside the table's rows: the guard's rules, state and headroom. */
export const GUARD_STATUS_TOOL = 'GuardStatus';

export function parseTier(text: string | undefined): Tier | undefined {
  return TIERS.find((tier) => tier === text?.trim().toLowerCase());
}

/**
 * The lowest tier that lists an operation, or undefined when the row is not consistent: a row
 * that moves money must say how the guard judges it (`guard`), and a read must not.
 */
export function tierOf(spec: OperationSpec): Tier | undefined {
  if (spec.movesMoney && spec.guard !== undefined) return 'paper';
  if (!spec.movesMoney && spec.guard === undefined) return 'read';
  return undefined;
}

const rank = (tier: Tier) => TIERS.indexOf(tier);

/** The operations a tier lists, in table order. */
export function operationsForTier(tier: Tier): OperationName[] {
  return OPERATION_NAMES.filter((name) => {
    const needs = tierOf(OPERATIONS[name] as OperationSpec);
    return needs !== undefined && rank(needs) <= rank(tier);
  });
}

/** The tool that runs an alert message (src/mcp/alert-tool.ts): in the tiers that move money. */
export const ALERT_TOOL = 'Alert';

/** Every tool a tier lists: its operations, then GuardStatus, then Alert where money may move. */
export function toolNamesForTier(tier: Tier): string[] {
  return [...operationsForTier(tier), GUARD_STATUS_TOOL, ...(tier === 'read' ? [] : [ALERT_TOOL])];
}

/** The tool's description: the row's summary, its route in the reference, and what a call may do. */
export function describeOperation(name: OperationName): string {
  const spec = OPERATIONS[name] as OperationSpec;
  const route = `${spec.method} /v1/api${spec.path}`;
  const money = spec.movesMoney
    ? ` Moves money: judged by the guard's rules first (the GuardStatus tool shows them), refused with the rule's name, and journaled (trade history).`
    : ' Reads only.';
  const account = 'account' in spec.fields() ? ' account is an account name, e.g. Sim101.' : '';
  return `${spec.summary} (service operation ${spec.indexName ?? name}, ${route}).${money}${account}`;
}

/** Is this field one the caller must give? */
const required = (field: z.core.$ZodType) => !z.safeParse(field, undefined).success;

/** Whether a call of the operation without an account takes the default one (the row requires an account). */
export function takesDefaultAccount(name: OperationName): boolean {
  const account = (OPERATIONS[name] as OperationSpec).fields().account;
  return account !== undefined && required(account);
}

/**
 * The tool's input as JSON Schema: the row's fields as a strict object, as a client writes them
 * (before normalization). When a default account is set (--account, TRADE_ACCOUNT, the profile's
 * `account`), a required `account` becomes optional with that default. An optional account stays
 * as it is: in FlattenEverything its absence means "every account".
 */
export function inputJsonSchemaOf(name: OperationName, defaultAccount?: string): Record<string, unknown> {
  const spec = OPERATIONS[name] as OperationSpec;
  const fields: Record<string, z.core.$ZodType> = { ...spec.fields() };
  if (defaultAccount !== undefined && takesDefaultAccount(name)) fields.account = accountNameField().prefault(defaultAccount);
  const { $schema: _draft, ...schema } = z.toJSONSchema(z.strictObject(fields), { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
  return schema;
}

/**
 * A call's arguments, validated and normalized as `trade batch` does a line (parseArgs, client
 * mode: unknown fields refused), after the default account is put in where the row needs one. A
 * ValidationError carries the CLI's message: `Invalid request: quantity: ...`.
 */
export function argsOf<K extends OperationName>(name: K, input: unknown, defaultAccount?: string): ArgsOf<K> {
  const args = input === undefined ? {} : input;
  const withAccount =
    defaultAccount !== undefined && args !== null && typeof args === 'object' && !Array.isArray(args) && (args as { account?: unknown }).account === undefined && takesDefaultAccount(name)
      ? { ...args, account: defaultAccount }
      : args;
  return parseArgs(name, withAccount, 'client');
}
