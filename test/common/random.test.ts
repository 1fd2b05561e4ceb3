import { randomBytes as cryptoRandomBytes, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromKernel, randomBytes, sha256Hex } from '../../src/common/random.js';

const dir = mkdtempSync(join(tmpdir(), 'trade-random-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('random bytes without node:crypto at start-up', () => {
  it('reads the asked number of bytes from the kernel, different at each call', () => {
    const seen = new Set<string>();
    for (const size of [1, 4, 16, 4096, 70_000]) {
      const bytes = randomBytes(size);
      expect(bytes.length).toBe(size);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(5);
    const a = fromKernel(16);
    const b = fromKernel(16);
    expect(a?.length).toBe(16);
    expect(a?.equals(b!)).toBe(false);
    // 4 KiB of the kernel's bytes are not all one value (a device giving zeros would be).
    expect(new Set(fromKernel(4096)).size).toBeGreaterThan(200);
  });

  it('trusts no regular file in the device\'s place, and no missing device', () => {
    const fake = join(dir, 'urandom');
    writeFileSync(fake, cryptoRandomBytes(64));
    expect(fromKernel(16, fake)).toBeUndefined();
    expect(fromKernel(16, join(dir, 'none'))).toBeUndefined();
    expect(fromKernel(16, dir)).toBeUndefined();
  });

  it("hashes as node:crypto's SHA-256", () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const text of ['', 'Sim101', 'Sim101\u0000ES 09-25', 'é'.repeat(100)]) expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
  });
});
