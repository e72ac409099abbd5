// Headless Chromium (Debian's `chromium`, driven by playwright-core) for the console's end-to-end tests.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Served } from './served';

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

/** A browser test file's service and Chromium (read them inside its tests: they are set in beforeAll). */
export interface BrowserSuite {
  /** `describe`, or `describe.skip` where there is no Chromium (noBrowser() says why). */
  readonly describe: jest.Describe;
  readonly s: Served;
  readonly browser: Browser;
}

/**
 * Starts `start()`'s service, then Chromium with `flags`, before the file's tests; after them closes the browser first
 * (its pages hold connections to the service, the console's WebSocket among them), then runs `beforeClose`, then
 * closes the service. Where there is no Chromium, nothing starts and the file's tests are skipped.
 */
export function browserSuite(
  start: () => Promise<Served>,
  options: { flags?: string[]; beforeClose?: (s: Served) => Promise<void> } = {},
): BrowserSuite {
  const missing = noBrowser();
  if (missing) console.warn(missing);
  let s: Served | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (missing) return;
    s = await start();
    browser = await launch(options.flags);
  });
  afterAll(async () => {
    await browser?.close();
    if (s) await options.beforeClose?.(s);
    await s?.close();
  });
  return {
    describe: missing ? describe.skip : describe,
    get s() {
      return s as Served;
    },
    get browser() {
      return browser as Browser;
    },
  };
}

/** Opens the console at `base` and signs in with `key`; `shot`: a screenshot of the filled form, written there. */
export async function signIn(page: Page, base: string, key: string, shot?: string): Promise<void> {
  await page.goto(`${base}/console`);
  await page.fill('#api-key', key);
  if (shot) await page.screenshot({ path: shot });
  await page.click('#sign-in');
  await page.waitForSelector('#who');
}
