// The console's Locks tab in headless Chromium: the locks held now, with their fencing tokens, never owner tokens.
import type { Browser } from 'playwright-core';
import { createGateway } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { launch, noBrowser } from './support/browser';
import { type Served, served } from './support/served';

const admin = apiKey('console-locks-admin', ['read', 'write', 'admin']);
const missing = noBrowser();
if (missing) console.warn(missing);
const describeIn = missing ? describe.skip : describe;

let s: Served;
let browser: Browser;
beforeAll(async () => {
  if (missing) return;
  s = await served('console-locks', { SVC_API_KEYS: JSON.stringify({ keys: [admin] }) });
  browser = await launch();
});
afterAll(async () => {
  if (missing) return;
  await browser?.close();
  const internal = await s.t.raw.keys(`#svc:lock:{${s.t.prefix}*`);
  if (internal.length) await s.t.raw.del(...internal);
  await s?.close();
});

describeIn('the Locks tab', () => {
  test('when a lock is held, then the tab lists it with its fencing token, and not its owner token', async () => {
    const gw = createGateway({ baseUrl: s.base, token: admin.key });
    const grant = await gw.locks.acquire('console:job', { ttlMs: 60_000 });
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${s.base}/console`);
    await page.fill('#api-key', admin.key);
    await page.click('#sign-in');
    await page.click('#tab-locks');
    const row = page.locator('tr.lock[data-name="console:job"]');
    await row.waitFor();
    expect(await row.textContent()).toContain(String(grant.fence));
    expect(await page.content()).not.toContain(grant.token);
    await gw.locks.release('console:job', grant.token);
    await page.waitForSelector('#no-locks');
  });
});
