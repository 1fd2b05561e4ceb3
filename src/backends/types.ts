import type { BackendName } from '../config/keys.js';
import type { Detail } from '../engine/service.js';
import type { ArgsOf, OperationName, ReplyOf } from '../service/operations.js';

export type { BackendName, Detail };

/** One operation's answer. */
export interface CallResult<K extends OperationName = OperationName> {
  /** The service's body exactly as it came (or as the simulator answers): what `--json` prints. */
  body: unknown;
  /** The body as read: lists normalized, the fields a client uses typed (src/service/shapes.ts). */
  value: ReplyOf<K>;
  /** What the embedded engine can tell beyond the body; remote backends have only the body. */
  detail?: Detail;
}

/**
 * One interface, three factories (embedded, http, ws). `call` runs one row of the operation
 * table (src/service/operations.ts) with args that passed its schema, and either resolves with
 * the service's answer or rejects with a typed error from src/common/errors.ts.
 */
export interface Backend {
  readonly name: BackendName;
  /** Where requests go, for every human result: "embedded (/path/trade.db)" or "http (host:port)". */
  readonly label: string;
  call<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<CallResult<K>>;
  close(): Promise<void>;
}

/**
 * What the guard reads before an order, answered directly by a backend that can (the embedded
 * engine, in-process): no round trip and no reply shaping. Remote backends have none; the guard
 * then asks through `call` (GetPosition, GetOrders, GetAccount).
 */
export interface GuardFacts {
  /** The net position (long > 0). */
  position(account: string, instrument: string): number;
  /** Contracts still to fill of the working orders of one instrument and side. */
  working(account: string, instrument: string, action: 'BUY' | 'SELL'): number;
  /** Realized P&L of the trading day plus the open positions' unrealized, in money (GetAccount's two figures). */
  dayPnl(account: string): number;
  /** The backend's time: the engine's clock, which is a replay's while one drives it (issue 29). */
  now?(): Date;
}
