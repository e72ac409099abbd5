// The console's Locks tab in headless Chromium: the locks held now, with their fencing tokens, never owner tokens.
import { createGateway } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { browserSuite, signIn } from './support/browser';
import { served } from './support/served';

const admin = apiKey('console-locks-admin', ['read', 'write', 'admin']);
const b = browserSuite(() => served('console-locks', { SVC_API_KEYS: JSON.stringify({ keys: [admin] }) }), {
  beforeClose: async (s) => {
    const internal = await s.t.raw.keys(`#svc:lock:{${s.t.prefix}*`);
    if (internal.length) await s.t.raw.del(...internal);
  },
});

b.describe('the Locks tab', () => {
  test('when a lock is held, then the tab lists it with its fencing token, and not its owner token', async () => {
    const gw = createGateway({ baseUrl: b.s.base, token: admin.key });
    const grant = await gw.locks.acquire('console:job', { ttlMs: 60_000 });
    const page = await (await b.browser.newContext()).newPage();
    await signIn(page, b.s.base, admin.key);
    await page.click('#tab-locks');
    const row = page.locator('tr.lock[data-name="console:job"]');
    await row.waitFor();
    expect(await row.textContent()).toContain(String(grant.fence));
    expect(await page.content()).not.toContain(grant.token);
    await gw.locks.release('console:job', grant.token);
    await page.waitForSelector('#no-locks');
  });
});
