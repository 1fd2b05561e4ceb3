import * as z from 'zod';
import { OPERATIONS, OPERATION_NAMES } from '/work/wt-mcp/src/service/operations.ts';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
for (const n of OPERATION_NAMES) {
  const s = z.strictObject(OPERATIONS[n].fields());
  try { const j = toJsonSchemaCompat(s as any, { pipeStrategy: 'input' } as any); if (n==='PlaceOrder'||n==='GetQuote'||n==='ClosePosition') console.log(n, JSON.stringify(j)); }
  catch (e) { console.log('FAIL', n, (e as Error).message); }
}
