// Swagger UI at /docs in headless Chromium against a real service: the page loads the served /openapi.yaml and
// lists its operations, with no script error (the service keeps no copy of the document for the page).
import { browserSuite } from './support/browser';
import { served } from './support/served';

const b = browserSuite(() => served('docs-browser', {}, 4));

b.describe('Swagger UI in a browser', () => {
  test('GET /docs shows the operations of /openapi.yaml', async () => {
    const page = await b.browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    const fetched: string[] = [];
    page.on('response', (res) => fetched.push(`${res.status()} ${new URL(res.url()).pathname}`));
    await page.goto(`${b.s.base}/docs`);
    await page.waitForSelector('.opblock-summary-path[data-path="/store/string/{key}"]');
    expect(await page.locator('.info .title').innerText()).toContain('Redis HTTP Gateway');
    expect(fetched).toContain('200 /openapi.yaml');
    expect(problems).toEqual([]);
    await page.close();
  });
});
