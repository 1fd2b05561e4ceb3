/**
 * Milliseconds on a monotonic clock, for deadlines and durations. The global `performance` is
 * Node's lazily loaded perf_hooks: its first read costs a CLI process 1–2 ms of CPU (issue 34),
 * for the same clock that `process.hrtime` reads at once.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;
