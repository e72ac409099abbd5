// Swagger UI at /docs in headless Chromium against a real service: the page loads the served /openapi.yaml and
// lists its operations, with no script error (the service keeps no copy of the document for the page).
import type { Browser } from 'playwright-core';
import { launch, noBrowser } from './support/browser';
import { type Served, served } from './support/served';

const missing = noBrowser();
if (missing) console.warn(missing);
const describeIn = missing ? describe.skip : describe;

let s: Served;
let browser: Browser;

beforeAll(async () => {
  if (missing) return;
  s = await served('docs-browser', {}, 4);
  browser = await launch();
});
afterAll(async () => {
  if (missing) return;
  await browser?.close();
  await s?.close();
});

describeIn('Swagger UI in a browser', () => {
  test('GET /docs shows the operations of /openapi.yaml', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    const fetched: string[] = [];
    page.on('response', (res) => fetched.push(`${res.status()} ${new URL(res.url()).pathname}`));
    await page.goto(`${s.base}/docs`);
    await page.waitForSelector('.opblock-summary-path[data-path="/store/string/{key}"]');
    expect(await page.locator('.info .title').innerText()).toContain('Redis HTTP Gateway');
    expect(fetched).toContain('200 /openapi.yaml');
    expect(problems).toEqual([]);
    await page.close();
  });
});
