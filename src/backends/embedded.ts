import { createEngine, type Engine, type EngineOptions } from '../engine/engine.js';
import type { Backend } from './types.js';

export interface EmbeddedBackendOptions extends EngineOptions {
  /** The SQLite store's path. */
  file: string;
}

export interface EmbeddedBackend extends Backend {
  readonly engine: Engine;
}

export function createEmbeddedBackend(options: EmbeddedBackendOptions): EmbeddedBackend {
  const engine = createEngine(options.file, options);
  return {
    name: 'embedded',
    label: `embedded (${options.file})`,
    engine,
    async placeOrder(order) {
      const { orderId, order: record } = engine.placeOrder(order);
      return { orderId, success: true, detail: { order: record } };
    },
    async reversePosition(order) {
      const outcome = engine.reversePosition(order);
      return {
        orderId: outcome.orderId,
        success: true,
        detail: { order: outcome.order, closingOrder: outcome.closingOrder, cancelledOrderIds: outcome.cancelledOrderIds },
      };
    },
    async listOrders(filter) {
      return engine.listOrders(filter);
    },
    async listPositions(filter) {
      return engine.listPositions(filter);
    },
    async close() {
      engine.close();
    },
  };
}
