/**
 * `trade mcp`'s tools, derived from the operation table (src/service/operations.ts): one tool per
 * row, named as the service names it, its input the row's fields (a strict object: a misspelt
 * field is an error, not an order sent without it), its description the row's summary and route.
 * A row is put in a tier by what the table says of it: an operation that moves money needs
 * `paper` or `trade`, a read needs only `read`. Nothing here loads the MCP SDK: the table walk in
 * the tests and the command's checks run without it.
 */
import * as z from 'zod';
import { type FieldIssue } from '../order/errors.js';
import { accountNameField } from '../order/schema.js';
import { OPERATION_NAMES, OPERATIONS, type OperationName, type OperationSpec } from '../service/operations.js';

/** What the person starting the server lets an agent do, from least to most. */
export const TIERS = ['read', 'paper', 'trade'] as const;
export type Tier = (typeof TIERS)[number];

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

/** Every tool a tier lists: its operations, then GuardStatus. */
export function toolNamesForTier(tier: Tier): string[] {
  return [...operationsForTier(tier), GUARD_STATUS_TOOL];
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

/**
 * The tool's input: the row's fields as a strict object, its cross-field rules (`check`) in the
 * same pass, and, when a default account is set (--account, TRADE_ACCOUNT, the profile's
 * `account`), a required `account` that defaults to it. An optional account stays optional: in
 * FlattenEverything its absence means "every account".
 */
export function inputSchemaOf(name: OperationName, defaultAccount?: string): z.ZodObject {
  const spec = OPERATIONS[name] as OperationSpec;
  const fields: Record<string, z.core.$ZodType> = { ...spec.fields() };
  if (defaultAccount !== undefined && fields.account !== undefined && required(fields.account))
    fields.account = accountNameField.prefault(defaultAccount);
  const object = z.strictObject(fields);
  const check = spec.check;
  if (!check) return object;
  return object.superRefine((args, ctx) => {
    for (const issue of check(args) as FieldIssue[]) ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message, input: args });
  });
}
