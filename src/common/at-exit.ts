/**
 * A process that runs one command and ends (the bin: src/cli/main.ts) may leave its SQLite
 * connections to the end of the process instead of closing them: when the last connection to a
 * WAL file closes, SQLite copies the log into the database, syncs both and deletes the log, and
 * the next process's first commit makes a new log and syncs its header and the directory (eight
 * `fsync` calls in a `trade place`, for its two files). A connection left here has had its log
 * synced instead (src/engine/sqlite.ts: releaseDb), so what it committed survives a power loss
 * from the moment the process ends, as after a close; the next process to open the file finds the
 * log and reads it, as SQLite does after any process that ended without closing.
 *
 * Only main() turns this on, and then ends the process itself once its command has returned and
 * a connection was left (`leftForExit`). Everything else (the library, tests calling run() in process, `trade serve`'s
 * sandbox) closes its connections as always.
 */

let oneShot = false;
let left = 0;

/** main(): this process ends when its command returns. */
export function endWithCommand(): void {
  oneShot = true;
}

/** Whether this process ends when its command returns (main), so that a connection may be left to it. */
export function endsWithCommand(): boolean {
  return oneShot;
}

/** Counts a connection left for the end of the process. */
export function leaveForExit(): void {
  left++;
}

/** How many connections were left for the end of the process. */
export function leftForExit(): number {
  return left;
}
