/**
 * Debian's chromium for the browser tests, driven by playwright-core (no browser is ever
 * downloaded). The suite's global setup installs it when it is missing and this is root on Debian
 * (test/helpers/debian.ts, as .ci/run does); otherwise the run stops naming the package. Never
 * skipped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { ensureDebianCommands } from './debian.js';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser's path, once it is there (installed now when it can be). */
export function ensureChromium(): string {
  ensureDebianCommands([{ command: CHROMIUM, debianPackage: 'chromium' }]);
  return CHROMIUM;
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
