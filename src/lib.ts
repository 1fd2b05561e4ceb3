/**
 * The programmatic entry (`import { createEngine } from 'trade'`), also used by bench/.
 * Nothing here runs at import time.
 */
export { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
export { createEmbeddedBackend } from './backends/embedded.js';
export { createHttpBackend } from './backends/http.js';
export { createWsBackend } from './backends/ws.js';
export type { Backend, CallResult } from './backends/types.js';
export { OPERATIONS, parseArgs, type OperationName } from './service/operations.js';
export { parseOrder, parseOrderBody, type Order, type OrderBody } from './service/order.js';
export * from './common/errors.js';
export { guardBackend, type GuardedBackend, type GuardOptions } from './guard/guard.js';
export { buildRules, evaluate, GUARD_RULES, normalizeRule, type GuardRule, type Rules } from './guard/rules.js';
export { ledgerPath, openLedger } from './guard/ledger.js';
