/**
 * Random bytes and SHA-256 for the modules a `trade place` runs (the engine's order ids, the
 * guard's client order ids, its spool and account locks), without loading `node:crypto` when they
 * load: that module alone costs a CLI process about 5 ms of CPU and 2 MiB (docs/performance.md,
 * "Fifth round"). Random bytes are read from the kernel's generator, `/dev/urandom` (the source
 * Node's own generator is seeded from), when it is a character device; anywhere else (Windows, a
 * sandbox without /dev, a regular file in its place) they come from `node:crypto`, loaded then.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** `node:crypto`, loaded on first use. */
function crypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}

/** `size` bytes from the kernel's generator (`device`), or undefined where it cannot be read as one. */
export function fromKernel(size: number, device = '/dev/urandom'): Buffer<ArrayBuffer> | undefined {
  if (process.platform === 'win32') return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(device, 'r');
    // A regular file named /dev/urandom (a chroot, a container's bind mount) would give the same
    // bytes every time: only the device is trusted.
    if (!fstatSync(fd).isCharacterDevice()) return undefined;
    const bytes = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const read = readSync(fd, bytes, got, size - got, null);
      if (read <= 0) return undefined;
      got += read;
    }
    return bytes;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `size` random bytes, fit for ids and file names that must not collide. */
export function randomBytes(size: number): Buffer<ArrayBuffer> {
  return fromKernel(size) ?? crypto().randomBytes(size);
}

/** The SHA-256 of `text` (UTF-8) in hexadecimal. */
export function sha256Hex(text: string): string {
  return crypto().hash('sha256', text, 'hex');
}

/**
 * The SHA-256 of `text` (UTF-8): what the token checks compare with timingSafeEqual. One call,
 * no Hash object: ~1.3 µs less on every request `trade serve` checks (issue 34).
 */
export function sha256(text: string): Buffer {
  return crypto().hash('sha256', text, 'buffer');
}
