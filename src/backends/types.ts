import type { Order } from '../order/schema.js';
import type { OrderFilter, OrderRecord, PositionRecord } from '../engine/engine.js';

export type { OrderFilter, OrderRecord, PositionRecord };

export const BACKEND_NAMES = ['embedded', 'http', 'ws'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** What the engine can tell beyond the service's body; remote backends have only the body. */
export interface OrderDetail {
  order: OrderRecord;
  closingOrder?: OrderRecord;
  cancelledOrderIds?: string[];
}

/** The service's success body (section 2.3), plus details when the backend has them. */
export interface OrderResult {
  orderId: string;
  success: true;
  detail?: OrderDetail;
}

/**
 * One interface, three factories (embedded, http, ws). Every method either resolves with the
 * service's answer or rejects with a typed error from src/order/errors.ts.
 */
export interface Backend {
  readonly name: BackendName;
  /** Where orders go, for every human result: "embedded (/path/trade.db)" or "http (host:port)". */
  readonly label: string;
  placeOrder(order: Order): Promise<OrderResult>;
  reversePosition(order: Order): Promise<OrderResult>;
  listOrders(filter?: OrderFilter): Promise<OrderRecord[]>;
  listPositions(filter?: OrderFilter): Promise<PositionRecord[]>;
  close(): Promise<void>;
}
