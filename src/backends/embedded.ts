import { createEngine, type Engine, type EngineOptions, type PositionRecord } from '../engine/engine.js';
import type { Backend, ClosedPosition } from './types.js';

export interface EmbeddedBackendOptions extends EngineOptions {
  /** The SQLite store's path. */
  file: string;
}

export interface EmbeddedBackend extends Backend {
  readonly engine: Engine;
}

/** A position as Close Position reports it: the side and an unsigned quantity. */
export function toClosedPosition(position: PositionRecord): ClosedPosition {
  return {
    account: position.account,
    instrument: position.instrument,
    marketPosition: position.quantity > 0 ? 'Long' : 'Short',
    quantity: Math.abs(position.quantity),
    averagePrice: position.avgPrice,
  };
}

export function createEmbeddedBackend(options: EmbeddedBackendOptions): EmbeddedBackend {
  const engine = createEngine(options.file, options);
  return {
    name: 'embedded',
    label: `embedded (${options.file})`,
    engine,
    async placeOrder(order) {
      const outcome = engine.placeOrder(order);
      return {
        orderId: outcome.orderId,
        success: true,
        detail: { order: outcome.order, cancelledOrderIds: outcome.cancelledOrderIds, bracketOrders: outcome.bracketOrders },
      };
    },
    async reversePosition(order) {
      const outcome = engine.reversePosition(order);
      return {
        orderId: outcome.orderId,
        success: true,
        detail: {
          order: outcome.order,
          closingOrder: outcome.closingOrder,
          cancelledOrderIds: outcome.cancelledOrderIds,
          bracketOrders: outcome.bracketOrders,
        },
      };
    },
    async cancelOrder(account, orderId) {
      const outcome = engine.cancelOrder(account, orderId);
      return {
        orderId: outcome.orderId,
        success: true,
        detail: { order: outcome.order, cancelledOrderIds: outcome.cancelledOrderIds },
      };
    },
    async closePosition(account, instrument) {
      const outcome = engine.closePosition(account, instrument);
      return {
        closedPositions: [toClosedPosition(outcome.closed)],
        success: true,
        detail: { closingOrder: outcome.closingOrder, cancelledOrderIds: outcome.cancelledOrderIds },
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
