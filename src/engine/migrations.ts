/** The store's schema, one migration per version. */
/** Each entry moves the schema one version up. Never edit a shipped entry; add a new one. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    created_at TEXT NOT NULL
  );
  CREATE TABLE orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL REFERENCES accounts(name),
    instrument TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('BUY','SELL')),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    order_type TEXT NOT NULL CHECK (order_type IN ('MARKET','LIMIT','STOPMARKET','STOPLIMIT')),
    time_in_force TEXT NOT NULL CHECK (time_in_force IN ('DAY','GTC')),
    limit_price REAL,
    stop_price REAL,
    oco_id TEXT,
    strategy TEXT,
    state TEXT NOT NULL CHECK (state IN ('WORKING','FILLED','CANCELLED','EXPIRED')),
    filled_quantity INTEGER NOT NULL DEFAULT 0,
    avg_fill_price REAL,
    origin TEXT NOT NULL DEFAULT 'client',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX orders_by_account ON orders(account, instrument, state);
  CREATE TABLE fills (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL REFERENCES orders(id),
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    action TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    price REAL,
    time TEXT NOT NULL
  );
  CREATE INDEX fills_by_order ON fills(order_id);
  CREATE TABLE positions (
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    avg_price REAL,
    realized_pnl REAL NOT NULL DEFAULT 0,
    pnl_known INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account, instrument)
  );
  CREATE TABLE prices (
    instrument TEXT PRIMARY KEY,
    price REAL NOT NULL,
    updated_at TEXT NOT NULL
  );
  INSERT INTO accounts(name, created_at) VALUES ('Sim101', strftime('%Y-%m-%dT%H:%M:%fZ','now'));
  `,
  // 2: prices that fill working orders, OCO groups, ATM templates and brackets, DAY expiry.
  // An ATM entry keeps the distances it was placed with, so removing a template later does not
  // change the brackets of an entry that is still working.
  `
  ALTER TABLE orders ADD COLUMN parent_id TEXT;
  ALTER TABLE orders ADD COLUMN triggered INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE orders ADD COLUMN atm_stop_loss_ticks INTEGER;
  ALTER TABLE orders ADD COLUMN atm_profit_target_ticks INTEGER;
  ALTER TABLE orders ADD COLUMN atm_tick_size REAL;
  CREATE INDEX orders_by_oco ON orders(account, oco_id) WHERE oco_id IS NOT NULL;
  CREATE INDEX orders_working ON orders(state, instrument);
  CREATE TABLE atm_templates (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    stop_loss_ticks INTEGER NOT NULL CHECK (stop_loss_ticks > 0),
    profit_target_ticks INTEGER NOT NULL CHECK (profit_target_ticks > 0),
    tick_size REAL NOT NULL CHECK (tick_size > 0),
    created_at TEXT NOT NULL
  );
  `,
  // 3: fewer pages written per order. Working-order indexes cover only working orders, so a
  // market order that fills at once stays out of them; positions are keyed by their primary
  // key alone (no rowid b-tree beside it); the oldest working DAY order is one index probe away.
  `
  DROP INDEX orders_working;
  CREATE INDEX orders_working ON orders(instrument, seq) WHERE state = 'WORKING';
  CREATE INDEX orders_day_working ON orders(created_at) WHERE state = 'WORKING' AND time_in_force = 'DAY';
  CREATE TABLE positions_v3 (
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    avg_price REAL,
    realized_pnl REAL NOT NULL DEFAULT 0,
    pnl_known INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account, instrument)
  ) WITHOUT ROWID;
  INSERT INTO positions_v3 SELECT account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at FROM positions;
  DROP TABLE positions;
  ALTER TABLE positions_v3 RENAME TO positions;
  `,
  // 4: the service's order id, which a client may choose (service-reference.md §1.6): unique per
  // account, so two accounts may each have an 'ex-1'. The row's own id stays the key that fills,
  // brackets and OCO links use.
  `
  ALTER TABLE orders ADD COLUMN order_id TEXT;
  UPDATE orders SET order_id = id;
  CREATE UNIQUE INDEX orders_by_order_id ON orders(account, order_id);
  `,
  // 5: what the service reports beyond orders and positions. Each fill becomes an Execution (its
  // id, the position after it, the P&L it realized); a Change is remembered on the order; every
  // price set is a tick, for quotes and bars (fills are the ticks with volume).
  `
  ALTER TABLE orders ADD COLUMN limit_price_changed REAL;
  ALTER TABLE orders ADD COLUMN stop_price_changed REAL;
  ALTER TABLE fills ADD COLUMN execution_id TEXT;
  UPDATE fills SET execution_id = lower(hex(randomblob(16)));
  ALTER TABLE fills ADD COLUMN position_after INTEGER;
  ALTER TABLE fills ADD COLUMN realized REAL NOT NULL DEFAULT 0;
  CREATE TABLE ticks (
    seq INTEGER PRIMARY KEY,
    instrument TEXT NOT NULL,
    price REAL NOT NULL,
    time TEXT NOT NULL
  );
  CREATE INDEX ticks_by_instrument ON ticks(instrument, time);
  INSERT INTO ticks (instrument, price, time) SELECT instrument, price, updated_at FROM prices;
  `,
  // 6: the simulator's settings per contract root (docs/paper-trading.md): a commission per
  // contract charged on every fill, and slippage in ticks for market and stop fills.
  `
  CREATE TABLE contract_settings (
    root TEXT PRIMARY KEY,
    commission REAL NOT NULL DEFAULT 0,
    slippage_ticks INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
  ) WITHOUT ROWID;
  ALTER TABLE fills ADD COLUMN commission REAL NOT NULL DEFAULT 0;
  `,
  // 7: the user's own contracts (\`trade contract add\`: roots the table lacks, or overrides of its
  // own), and where each instrument's prices come from (\`trade price source\`): \`*\` for every
  // instrument, a root, or one contract; the most specific wins.
  `
  CREATE TABLE custom_contracts (
    root TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    exchange TEXT NOT NULL,
    tick_size REAL NOT NULL,
    point_value REAL NOT NULL,
    months TEXT NOT NULL,
    day_end TEXT NOT NULL,
    demo_price REAL,
    updated_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE price_sources (
    target TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    updated_at TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 8: a lean write per order (issue 16). Orders and fills never are deleted, so their rowids
  // grow without AUTOINCREMENT (which wrote sqlite_sequence on every insert); the rebuild keeps
  // every seq. orders_by_account goes: the account prefix of orders_by_order_id serves account
  // lookups, and the working orders of an account have a partial index, so an order that fills
  // when placed touches no index but the two unique ones. fills_by_order was never read.
  // Migrations run with foreign keys off and checked whole before the commit (store.ts).
  `
  CREATE TABLE orders_v8 (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    order_id TEXT NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(name),
    instrument TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('BUY','SELL')),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    order_type TEXT NOT NULL CHECK (order_type IN ('MARKET','LIMIT','STOPMARKET','STOPLIMIT')),
    time_in_force TEXT NOT NULL CHECK (time_in_force IN ('DAY','GTC')),
    limit_price REAL,
    stop_price REAL,
    limit_price_changed REAL,
    stop_price_changed REAL,
    oco_id TEXT,
    strategy TEXT,
    state TEXT NOT NULL CHECK (state IN ('WORKING','FILLED','CANCELLED','EXPIRED')),
    filled_quantity INTEGER NOT NULL DEFAULT 0,
    avg_fill_price REAL,
    origin TEXT NOT NULL DEFAULT 'client',
    parent_id TEXT,
    triggered INTEGER NOT NULL DEFAULT 0,
    atm_stop_loss_ticks INTEGER,
    atm_profit_target_ticks INTEGER,
    atm_tick_size REAL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  INSERT INTO orders_v8 (seq, id, order_id, account, instrument, action, quantity, order_type, time_in_force,
      limit_price, stop_price, limit_price_changed, stop_price_changed, oco_id, strategy, state, filled_quantity,
      avg_fill_price, origin, parent_id, triggered, atm_stop_loss_ticks, atm_profit_target_ticks, atm_tick_size,
      created_at, updated_at)
    SELECT seq, id, order_id, account, instrument, action, quantity, order_type, time_in_force,
      limit_price, stop_price, limit_price_changed, stop_price_changed, oco_id, strategy, state, filled_quantity,
      avg_fill_price, origin, parent_id, triggered, atm_stop_loss_ticks, atm_profit_target_ticks, atm_tick_size,
      created_at, updated_at FROM orders;
  CREATE TABLE fills_v8 (
    seq INTEGER PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders(id),
    execution_id TEXT,
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    action TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    price REAL,
    time TEXT NOT NULL,
    position_after INTEGER,
    realized REAL NOT NULL DEFAULT 0,
    commission REAL NOT NULL DEFAULT 0
  );
  INSERT INTO fills_v8 (seq, order_id, execution_id, account, instrument, action, quantity, price, time, position_after, realized, commission)
    SELECT seq, order_id, execution_id, account, instrument, action, quantity, price, time, position_after, realized, commission FROM fills;
  DROP TABLE fills;
  DROP TABLE orders;
  ALTER TABLE orders_v8 RENAME TO orders;
  ALTER TABLE fills_v8 RENAME TO fills;
  CREATE UNIQUE INDEX orders_by_order_id ON orders(account, order_id);
  CREATE INDEX orders_by_oco ON orders(account, oco_id) WHERE oco_id IS NOT NULL;
  CREATE INDEX orders_working ON orders(instrument, seq) WHERE state = 'WORKING';
  CREATE INDEX orders_working_by_account ON orders(account, instrument, seq) WHERE state = 'WORKING';
  CREATE INDEX orders_day_working ON orders(created_at) WHERE state = 'WORKING' AND time_in_force = 'DAY';
  DELETE FROM sqlite_sequence WHERE name IN ('orders', 'fills');
  `,
  // 9: the reason of an order a `trade serve` scenario rule rejects late (issue 22). While the
  // order is WORKING with a reason it is held (never matched) until the rule's delay has passed;
  // CANCELLED with a reason reads as the service's `Rejected`.
  `
  ALTER TABLE orders ADD COLUMN reject_reason TEXT;
  `,
  // 10: one-minute bars of every instrument's last prices (issue 30), kept as prices arrive
  // (minute-bars.ts): the price history a report draws, small whatever the feed's rate. Each bar
  // starts at a whole UTC minute (`minute`, epoch ms). The ticks already stored become bars.
  `
  CREATE TABLE minute_bars (
    instrument TEXT NOT NULL,
    minute INTEGER NOT NULL,
    open REAL NOT NULL,
    high REAL NOT NULL,
    low REAL NOT NULL,
    close REAL NOT NULL,
    ticks INTEGER NOT NULL,
    PRIMARY KEY (instrument, minute)
  ) WITHOUT ROWID;
  WITH m AS (SELECT seq, instrument, price, (CAST(strftime('%s', time) AS INTEGER) / 60) * 60000 AS minute FROM ticks)
  INSERT INTO minute_bars (instrument, minute, open, high, low, close, ticks)
    SELECT f.instrument, f.minute, f.price, a.high, a.low, l.price, a.n
    FROM (SELECT instrument, minute, min(seq), price FROM m GROUP BY instrument, minute) AS f
    JOIN (SELECT instrument, minute, max(seq), price FROM m GROUP BY instrument, minute) AS l USING (instrument, minute)
    JOIN (SELECT instrument, minute, max(price) AS high, min(price) AS low, count(*) AS n FROM m GROUP BY instrument, minute) AS a USING (instrument, minute);
  `,
  // 11: the session clock (issue 29). One row: while a replay drives the engine, the replayed
  // time every process sharing the store reads (src/service/session-clock.ts says what it
  // means), who drives it, and the control requests of `trade sandbox clock`.
  `
  CREATE TABLE session_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    replay INTEGER NOT NULL DEFAULT 0,
    owner_pid INTEGER,
    owner_host TEXT,
    source TEXT,
    time_ms REAL NOT NULL DEFAULT 0,
    wall_ms REAL NOT NULL DEFAULT 0,
    until_ms REAL,
    speed REAL NOT NULL DEFAULT 1,
    paused INTEGER NOT NULL DEFAULT 0,
    step_records INTEGER,
    step_until_ms REAL,
    control_seq INTEGER NOT NULL DEFAULT 0,
    ack_seq INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO session_clock (id) VALUES (1);
  `,
  // 12: reads that went through every order or every fill (issue 34). An order found by the
  // service's id without its account (`trade cancel ID` without `--account`), and an id's prefix
  // (the short ids `trade orders` shows at a terminal): the only index with order_id leads with the
  // account. An id the service made is the order's own `id` (order_id = id), indexed already; the
  // first index holds the others, the ids clients chose, and only them. An ATM entry's brackets
  // (CloseStrategy): the second holds the orders that have a parent, and only them. So an order
  // placed without a client id or a parent writes no more to them. The third, the fills by time (a
  // quote's day, GetExecutions' look-back, the day's realized P&L the guard's daily-loss rule
  // reads), is written by every fill, at its end: the times only grow.
  `
  CREATE INDEX orders_by_client_order_id ON orders(order_id) WHERE order_id <> id;
  CREATE INDEX orders_by_parent ON orders(parent_id) WHERE parent_id IS NOT NULL;
  CREATE INDEX fills_by_time ON fills(time);
  `,
  // 13: an order the service names writes one random-keyed index, not two. Its id is random (§1.6),
  // so each insert into an index keyed by it lands on another leaf page: with the id's own unique
  // index and orders_by_order_id (account, order_id) both, a group of nine MARKET orders wrote
  // about three times the log a time-ordered key would. A service-made id is the row's own `id`
  // (order_id = id), unique in the whole store; the ids clients choose are unique in their account
  // by the partial index that now holds them with it, and the check before an order is placed
  // reads both (a client's id that is another order's service-made id in the account is refused).
  // The two reads orders_by_order_id still served, an order by id in one account and an account's
  // id prefix, read those two indexes too, as the same reads without an account already did.
  `
  DROP INDEX orders_by_order_id;
  DROP INDEX orders_by_client_order_id;
  CREATE UNIQUE INDEX orders_by_client_order_id ON orders(order_id, account) WHERE order_id <> id;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * The last version that changed a table. Every migration after it only adds or drops indexes, so a
 * snapshot saved at this version or later holds the same tables as the store, and restores into
 * it (a test holds the migrations after it to that). Move it up with any migration that changes a
 * table.
 */
export const TABLES_VERSION = 11;
