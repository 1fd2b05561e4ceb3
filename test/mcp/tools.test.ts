/**
 * The operation table walked: every row is a tool of some tier, with an input schema from its
 * fields and a description from its summary. A row that moves money without saying how the guard
 * judges it (or a read that names a guard kind) has no tier, and fails here.
 */
import { describe, expect, it } from 'vitest';
import { OPERATION_NAMES, OPERATIONS, type OperationSpec } from '../../src/service/operations.js';
import { argsOf, describeOperation, GUARD_STATUS_TOOL, inputJsonSchemaOf, operationsForTier, tierOf, TIERS, toolNamesForTier } from '../../src/mcp/tools.js';
import { ValidationError } from '../../src/common/errors.js';

describe('tools from the operation table', () => {
  it.each(OPERATION_NAMES)('%s is a tool with a tier, a schema of its fields and its summary', (name) => {
    const spec = OPERATIONS[name] as OperationSpec;
    const tier = tierOf(spec);
    expect(tier, `${name} has no tier: movesMoney ${spec.movesMoney}, guard ${spec.guard}`).toBe(spec.movesMoney ? 'paper' : 'read');
    expect(toolNamesForTier('trade')).toContain(name);
    expect(toolNamesForTier(tier!)).toContain(name);
    const schema = inputJsonSchemaOf(name);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys((schema.properties ?? {}) as object).sort()).toEqual(Object.keys(spec.fields()).sort());
    expect(describeOperation(name)).toContain(spec.summary);
  });

  it('each tier lists exactly what the table allows it, and GuardStatus; Alert where money may move', () => {
    const reads = OPERATION_NAMES.filter((n) => !OPERATIONS[n].movesMoney);
    expect(toolNamesForTier('read')).toEqual([...reads, GUARD_STATUS_TOOL]);
    expect(toolNamesForTier('paper')).toEqual([...OPERATION_NAMES, GUARD_STATUS_TOOL, 'Alert']);
    expect(toolNamesForTier('trade')).toEqual([...OPERATION_NAMES, GUARD_STATUS_TOOL, 'Alert']);
    expect(new Set(TIERS.flatMap((t) => operationsForTier(t)))).toEqual(new Set(OPERATION_NAMES));
  });

  it('a row that is not consistent has no tier', () => {
    const base = OPERATIONS.PlaceOrder as OperationSpec;
    expect(tierOf({ ...base, guard: undefined })).toBeUndefined();
    expect(tierOf({ ...(OPERATIONS.GetOrders as OperationSpec), guard: 'exit' })).toBeUndefined();
  });

  it('a default account fills a required account only', () => {
    expect(argsOf('GetPositions', {}, 'Sim101')).toEqual({ account: 'Sim101' });
    expect(argsOf('GetPositions', { account: 'Sim202' }, 'Sim101')).toEqual({ account: 'Sim202' });
    // FlattenEverything without an account means every account: never filled in.
    expect(argsOf('FlattenEverything', {}, 'Sim101')).toEqual({});
    expect(inputJsonSchemaOf('GetPositions', 'Sim101').required ?? []).not.toContain('account');
    expect(inputJsonSchemaOf('GetPositions').required).toContain('account');
    expect(() => argsOf('GetPositions', {})).toThrow(ValidationError);
  });
});
