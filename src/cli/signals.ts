/** How a long-running command (`trade serve`, `trade watch`) learns that it should stop. */

/** Resolves with a reason when the command should stop; `dispose` removes whatever it installed. */
export type StopWhen = () => { stopped: Promise<string>; dispose(): void };

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Waits for the first SIGINT or SIGTERM. A second one gets Node's default: an immediate exit. */
export function untilSignal(): { stopped: Promise<string>; dispose(): void } {
  const handlers = new Map<NodeJS.Signals, () => void>();
  const stopped = new Promise<string>((resolve) => {
    for (const signal of SIGNALS) {
      const handler = () => {
        dispose();
        resolve(signal);
      };
      handlers.set(signal, handler);
      process.once(signal, handler);
    }
  });
  function dispose() {
    for (const [signal, handler] of handlers) process.removeListener(signal, handler);
  }
  return { stopped, dispose };
}

