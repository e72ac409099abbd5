// The console's Queues tab in headless Chromium: a queue's counts, its dead letters peeked, and a redrive.
import { createGateway, type Gateway } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { browserSuite, signIn } from './support/browser';
import { served } from './support/served';

const admin = apiKey('console-queues', ['read', 'write', 'admin']);
let gw: Gateway;
const b = browserSuite(async () => {
  const s = await served('console-queues', { SVC_API_KEYS: JSON.stringify({ keys: [admin] }) });
  gw = createGateway({ baseUrl: s.base, token: admin.key });
  return s;
});

b.describe('the Queues tab', () => {
  test('when a queue holds a dead letter, then the tab shows the counts, the dead letter and redrives it', async () => {
    await gw.queues.put('cq-console', { max_deliveries: 1 });
    await gw.queues.send('cq-console', [{ body: 'poison' }, { body: 'fine' }]);
    const [m] = await gw.queues.receive('cq-console');
    await gw.queues.nack('cq-console', [m?.receipt as string], { error: 'bad input' });
    const page = await (await b.browser.newContext()).newPage();
    await signIn(page, b.s.base, admin.key);
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
