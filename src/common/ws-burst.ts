/**
 * Frames sent in one burst leave in one write. ws writes each frame with its own cork and uncork
 * of the connection's socket, so 64 requests handed over in one turn (a batch's orders released
 * by one guard commit, the replies of one group commit) are 64 `writev` calls. Corking the socket
 * at the first frame of a burst and uncorking it on the next tick (after the promise callbacks
 * that send the rest of the burst have run) makes them one; the frames and their order are
 * unchanged, and a frame is delayed by no timer, only to the end of the turn it was sent in.
 */
import type { Duplex } from 'node:stream';

export function burstWriter(socket: object): () => void {
  let corked = false;
  let raw: Duplex | undefined;
  const uncork = () => {
    corked = false;
    raw!.uncork();
  };
  return () => {
    if (corked) return;
    // ws's own socket (set once the connection is open), not part of its typed API.
    raw = (socket as { _socket?: Duplex })._socket;
    if (!raw || typeof raw.cork !== 'function') return;
    corked = true;
    raw.cork();
    process.nextTick(uncork);
  };
}
