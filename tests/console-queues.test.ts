// The console's Queues tab in headless Chromium: a queue's counts, its dead letters peeked, and a redrive.
import type { Browser } from 'playwright-core';
import { createGateway, type Gateway } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { launch, noBrowser } from './support/browser';
import { type Served, served } from './support/served';

const admin = apiKey('console-queues', ['read', 'write', 'admin']);
const missing = noBrowser();
if (missing) console.warn(missing);
const describeIn = missing ? describe.skip : describe;

let s: Served;
let browser: Browser;
let gw: Gateway;
beforeAll(async () => {
  if (missing) return;
  s = await served('console-queues', { SVC_API_KEYS: JSON.stringify({ keys: [admin] }) });
  gw = createGateway({ baseUrl: s.base, token: admin.key });
  browser = await launch();
});
afterAll(async () => {
  if (missing) return;
  await browser?.close();
  await s?.close();
});

describeIn('the Queues tab', () => {
  test('when a queue holds a dead letter, then the tab shows the counts, the dead letter and redrives it', async () => {
    await gw.queues.put('cq-console', { max_deliveries: 1 });
    await gw.queues.send('cq-console', [{ body: 'poison' }, { body: 'fine' }]);
    const [m] = await gw.queues.receive('cq-console');
    await gw.queues.nack('cq-console', [m?.receipt as string], { error: 'bad input' });
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${s.base}/console`);
    await page.fill('#api-key', admin.key);
    await page.click('#sign-in');
    await page.click('#tab-queues');
    const row = page.locator('#queues tr', { hasText: 'cq-console' });
    await row.waitFor();
    expect(await row.locator('td').allInnerTexts()).toEqual(expect.arrayContaining(['1', '0']));
    await page.click('button[data-queue="cq-console"]');
    await page.click('#peek-dead');
    await page.locator('#queue-dead', { hasText: 'bad input' }).waitFor();
    await page.click('#redrive');
    await page.locator('#queue-detail', { hasText: 'No dead message' }).waitFor();
    expect((await gw.queues.get('cq-console')).stats).toMatchObject({ ready: 2, dead: 0 });
  });
});
