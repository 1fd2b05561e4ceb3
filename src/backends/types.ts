import type { BackendName } from '../config/keys.js';
import type { ClosedPosition, Order } from '../order/schema.js';
import type { OrderFilter, OrderRecord, PositionFilter, PositionRecord } from '../engine/engine.js';

export type { BackendName, ClosedPosition, OrderFilter, OrderRecord, PositionFilter, PositionRecord };

/** What the engine can tell beyond the service's body; remote backends have only the body. */
export interface OrderDetail {
  order: OrderRecord;
  closingOrder?: OrderRecord;
  /** Orders cancelled along the way: by the close of a reverse, or as OCO siblings of a fill. */
  cancelledOrderIds?: string[];
  /** ATM brackets placed because the order filled: stop-loss first, then profit-target. */
  bracketOrders?: OrderRecord[];
}

/** The service's success body (section 2.3), plus details when the backend has them. */
export interface OrderResult {
  orderId: string;
  success: true;
  detail?: OrderDetail;
}

/** Cancel's body `{orderId, success}`, plus details when the backend has them. */
export interface CancelResult {
  orderId: string;
  success: true;
  detail?: {
    order: OrderRecord;
    /** The order itself first, then its OCO siblings. */
    cancelledOrderIds: string[];
  };
}

/** Close Position's body `{closedPositions, success}`, plus details when the backend has them. */
export interface CloseResult {
  closedPositions: ClosedPosition[];
  success: true;
  detail?: {
    closingOrder: OrderRecord;
    cancelledOrderIds: string[];
  };
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
  /**
   * Cancel (`POST /v1/api/accounts/{account}/orders/{orderId}/cancel`, WS `Cancel`). A finished
   * or unknown order rejects with `Order linked to '<id>' not found or already terminal.` The
   * embedded engine can find an order without its account; the service's path needs it, so a
   * remote backend given no account throws a UsageError naming --account.
   */
  cancelOrder(account: string | undefined, orderId: string): Promise<CancelResult>;
  /**
   * Close Position (`POST /v1/api/accounts/{account}/positions/close` with `{instrument}`, WS
   * `ClosePosition`): cancels the instrument's working orders and flattens at market. With no
   * position it rejects with `No positions found for instrument '<instrument>'`.
   */
  closePosition(account: string, instrument: string): Promise<CloseResult>;
  listOrders(filter?: OrderFilter): Promise<OrderRecord[]>;
  listPositions(filter?: PositionFilter): Promise<PositionRecord[]>;
  close(): Promise<void>;
}
