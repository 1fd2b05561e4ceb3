/**
 * The host an alert runs on outside the service (`trade alert`, the MCP `Alert` tool): the
 * guarded backend for every operation (embedded, http or ws), the guard's halt as the kill
 * switch and its ledger for the self rate limit, shared by every trade process of the machine;
 * a limit-order timeout waited for while the command runs. It has no strategy lock and holds no
 * bracket for a fill: those the service's webhook keeps, so `unsupported` refuses them.
 */
import type { Backend } from '../backends/types.js';
import type { Ledger } from '../guard/ledger.js';
import type { AlertHost } from './run.js';

export interface ClientHostOptions {
  /** The guarded backend: every order of an alert passes the guard once. */
  backend: Backend;
  /** The guard's own ledger (GuardedBackend.ledger): the machine's, or the desk's; the guard closes it. */
  ledger: () => Promise<Ledger>;
  profile: string;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** A line for the person (stderr): waiting for a delay or a timeout. */
  note?: (line: string) => void;
}

const TERMINAL = new Set(['Filled', 'Cancelled', 'Rejected']);

/** The rate limit's counts live in the guard's `sends` under this pseudo-account, apart from any real one. */
export const rateKey = (id: string) => `alert-rate:${id}`;

export function createClientHost(options: ClientHostOptions): AlertHost & { close(): void } {
  const led = options.ledger;
  const { backend } = options;
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const scope = `profile:${options.profile}`;
  return {
    async call(name, args) {
      const result = await backend.call(name, args);
      return { body: result.body, value: result.value };
    },
    now,
    sleep,
    // The master kill switch is the profile's halt (`trade halt`, `trade resume`): every trade process honours it.
    killSwitch: async () => (await (await led()).halts(undefined, options.profile))?.mode === 'halted',
    async setKillSwitch(on) {
      if (on) await (await led()).setHalt(scope, 'halted', 'kill_switch=on (trade alert)', now().toISOString());
      else await (await led()).clearHalt(scope);
    },
    async takeRate(id, count, windowMs) {
      const at = now().getTime();
      return (await led()).exclusive(async (tx) => {
        if ((await tx.paceCounts(rateKey(id), [windowMs], at))[0]! >= count) return false;
        await tx.recordSend(rateKey(id), at, rateKey(id));
        return true;
      });
    },
    cancelAfter(account, orderId, dueMs) {
      const wait = Math.max(0, dueMs - now().getTime());
      options.note?.(`order ${orderId} is cancelled at ${new Date(dueMs).toISOString()} if not filled (cancel_after); this command waits until then`);
      return (async () => {
        await sleep(wait);
        const status = (await backend.call('GetOrderStatus', { account, orderId })).value.status;
        if (TERMINAL.has(status)) return options.note?.(`order ${orderId} is ${status.toLowerCase()}: nothing to cancel (cancel_after)`);
        await backend.call('Cancel', { account, orderId });
        options.note?.(`order ${orderId} was not filled in time: cancelled (cancel_after)`);
      })();
    },
    onPending: () => undefined,
    close() {
      // The ledger is the guard's: closed with the backend.
    },
  };
}
