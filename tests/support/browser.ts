// Headless Chromium (Debian's `chromium`, driven by playwright-core) for the console's end-to-end tests.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** CHROMIUM_PATH, else Debian's package. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser tests cannot run here, or undefined when they can. */
export function noBrowser(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  return `No Chromium at ${CHROMIUM}: the console's browser tests are skipped. Install it (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH.`;
}

/** Chromium with FLAGS and `extra` (e.g. `--host-resolver-rules=MAP evil.test 127.0.0.1`). */
export function launch(extra: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extra], headless: true });
}
