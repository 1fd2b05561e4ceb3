import { createEngine, type Engine, type EngineOptions } from '../engine/engine.js';
import { simulate } from '../engine/service.js';
import { createCommitter } from '../engine/committer.js';
import { OPERATIONS } from '../service/operations.js';
import type { ReplyOf } from '../service/operations.js';
import { envelopeData } from '../service/shapes.js';
import type { Backend, GuardFacts } from './types.js';
import { positionObject } from '../engine/service-shapes.js';

export interface EmbeddedBackendOptions extends EngineOptions {
  /** The SQLite store's path. */
  file: string;
}

export interface EmbeddedBackend extends Backend {
  readonly engine: Engine;
  readonly guardFacts: GuardFacts;
}

/** The simulation engine in-process, answering every operation as `trade serve` would. */
export function createEmbeddedBackend(options: EmbeddedBackendOptions): EmbeddedBackend {
  return embeddedBackendOn(createEngine(options.file, options));
}

/** The backend over an engine already open, which it closes (tests open one on a store with pragmas of their own). */
export function embeddedBackendOn(engine: Engine): EmbeddedBackend {
  // Operations that may move money and are called together (`trade batch`, a library caller's
  // Promise.all) share one commit; each call settles after the commit that holds it.
  const committer = createCommitter(engine);
  return {
    name: 'embedded',
    label: `embedded (${engine.file})`,
    engine,
    guardFacts: {
      position: (account, instrument) => engine.getPosition(account, instrument)?.quantity ?? 0,
      working: (account, instrument, action) =>
        engine
          .listOrders({ account, instrument, activeOnly: true })
          .filter((o) => o.action === action)
          .reduce((sum, o) => sum + Math.max(0, o.quantity - o.filledQuantity), 0),
      dayPnl(account) {
        const unrealized = engine.listPositions({ account }).reduce((sum, p) => sum + positionObject(engine, p).unrealizedProfitLoss, 0);
        return engine.accountMoneyToday(account).realizedToday + unrealized;
      },
      now: () => engine.now(),
    },
    async call(name, args) {
      const { body, detail } = await committer.inOrder(() => simulate(engine, name, args), OPERATIONS[name].movesMoney);
      // The value is read as a remote client reads it: GetWatermarks' data, not its envelope (§1.7).
      const value = (envelopeData(body) ?? body) as unknown as ReplyOf<typeof name>;
      return { body, value, ...(detail ? { detail } : {}) };
    },
    async close() {
      engine.close();
    },
  };
}
