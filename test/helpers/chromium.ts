/**
 * Debian's chromium for the browser tests, driven by playwright-core (no browser is ever
 * downloaded). When it is missing and this is root on Debian (CI, a fresh machine), it is
 * installed with apt-get, as .ci/run does; otherwise the test fails with a message naming the
 * package. Never skipped.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** How long installing the package may take (apt-get update, then chromium and its libraries). */
export const INSTALL_MS = 600_000;

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const root = process.getuid?.() === 0;
  if (root && existsSync('/usr/bin/apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore', timeout: INSTALL_MS });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { env, stdio: 'ignore', timeout: INSTALL_MS });
    if (existsSync(CHROMIUM)) return CHROMIUM;
  }
  throw new Error(
    `The browser tests need Debian's chromium package (${CHROMIUM}), and it is not installed` +
      (root ? ' (apt-get could not install it here).' : '. Install it with: sudo apt-get install chromium') +
      ' No browser is downloaded by the tests.',
  );
}

/** A headless chromium with a fresh profile, and what closes it and removes the profile. */
export async function launchChromium(options: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'trade-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: ensureChromium(),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: options.width ?? 1100, height: options.height ?? 900 },
    colorScheme: options.colorScheme ?? 'light',
    offline: true,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
