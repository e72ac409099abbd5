// The web console in headless Chromium against a real service: sign in, find a key, edit a hash field, see another
// client's change arrive live, see a 412 conflict instead of overwriting, and a read-only key that cannot edit.
// UPDATE_SCREENSHOTS=1 (npm run console:screenshots) also writes docs/console-*.png.
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { createGateway, type Gateway } from '../clients/typescript/src/index';
import { apiKey } from './support/auth';
import { browserSuite, signIn } from './support/browser';
import { served } from './support/served';

const admin = apiKey('console-admin', ['read', 'write', 'admin']);
const reader = apiKey('console-reader', ['read']);
const tenant = apiKey('console-tenant', ['read', 'write'], 'tenant-b:');
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const DOCS = path.join(__dirname, '..', 'docs');

let gw: Gateway;
const b = browserSuite(async () => {
  const s = await served(
    'console-browser',
    { SVC_API_KEYS: JSON.stringify({ keys: [admin, reader, tenant] }) },
    8,
  );
  gw = createGateway({ baseUrl: s.base, token: admin.key });
  return s;
});
const contexts: BrowserContext[] = [];
/** What went wrong in the pages: script errors, and anything the CSP refused. */
const problems: string[] = [];

/** A fresh tab (its own sessionStorage) signed in with `key`. */
async function signedIn(key: string): Promise<Page> {
  const context = await b.browser.newContext({ viewport: { width: 1200, height: 760 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (m) => {
    // An error answer is an error in the console too (401 before signing in, the 412 of a conflict): not a failure.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
      problems.push(`console: ${m.text()}`);
  });
  const shot = SHOTS && key === admin.key ? path.join(DOCS, 'console-sign-in.png') : undefined;
  await signIn(page, b.s.base, key, shot);
  return page;
}

/** Searches by prefix and opens the key. */
async function open(page: Page, prefix: string, key: string): Promise<void> {
  await page.fill('#prefix', prefix);
  await page.click('#search');
  await page.click(`button.key[data-key="${key}"]`);
  await page.waitForSelector(`#detail[data-key="${key}"]`);
}

/** Resolves once `read()` answers `expected` (checked every 50 ms, for at most 10 s), else fails with the last answer. */
async function eventually<T>(read: () => Promise<T>, expected: T): Promise<void> {
  let last: T | undefined;
  for (let i = 0; i < 200; i++) {
    last = await read();
    if (last === expected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(last).toBe(expected);
}

/** Waits until the open key's last write and the read after it are done (its ETag is current again). */
const settled = (page: Page) => page.waitForSelector('#detail[aria-busy="false"]');

const fieldInput = (page: Page, field: string) => page.locator(`input.field-value[data-field="${field}"]`);

b.describe('the console in Chromium', () => {
  test('when an admin signs in, then the key stays in the tab and its identity shows', async () => {
    const page = await signedIn(admin.key);
    expect(await page.textContent('#who')).toContain('console-admin');
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([admin.key]);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(await page.isVisible('#tab-service')).toBe(true);
  });

  test('when a user finds a hash and edits a field, then the service holds the new value', async () => {
    await gw.hashes.set('user:42', { name: 'Ada', lang: 'en' });
    await gw.strings.set('user:43', 'plain');
    const page = await signedIn(admin.key);
    await page.fill('#prefix', 'user:');
    await page.click('#search');
    await page.waitForSelector('button.key[data-key="user:43"]');
    expect(await page.locator('#key-list button.key').allTextContents()).toEqual(
      expect.arrayContaining(['user:42', 'user:43']),
    );
    await open(page, 'user:', 'user:42');
    await fieldInput(page, 'name').fill('Ada Lovelace');
    await page.click('button[data-save-field="name"]');
    await eventually(() => gw.hashes.getField('user:42', 'name'), 'Ada Lovelace');
    if (SHOTS) await page.screenshot({ path: path.join(DOCS, 'console-keys.png') });
  });

  test('when another client changes the open key, then the change appears live, in the key and in the feed', async () => {
    await gw.hashes.set('live:1', { step: 'one' });
    const page = await signedIn(admin.key);
    await open(page, 'live:', 'live:1');
    await page.waitForSelector('#detail');
    await gw.hashes.setField('live:1', 'step', 'two');
    await eventually(() => fieldInput(page, 'step').inputValue(), 'two');
    await page.click('#tab-changes');
    await page.waitForSelector('#feed-status.status-live');
    await gw.strings.set('live:2', 'x');
    await page.waitForSelector('#changes td.key:text-is("live:2")');
    if (SHOTS) await page.screenshot({ path: path.join(DOCS, 'console-changes.png') });
  });

  test('when the value changed after the user began editing, then saving shows a 412 conflict and overwrites nothing', async () => {
    await gw.hashes.set('cas:1', { owner: 'alice', note: 'a' });
    const page = await signedIn(admin.key);
    await open(page, 'cas:', 'cas:1');
    await fieldInput(page, 'owner').fill('bob');
    await gw.hashes.setField('cas:1', 'note', 'changed elsewhere');
    await page.click('button[data-save-field="owner"]');
    await page.waitForSelector('#conflict');
    expect(await page.textContent('#conflict')).toContain('412');
    expect(await gw.hashes.get('cas:1')).toMatchObject({
      fields: { owner: 'alice', note: 'changed elsewhere' },
    });
    if (SHOTS) await page.screenshot({ path: path.join(DOCS, 'console-conflict.png') });
    await page.click('#reload');
    await eventually(() => fieldInput(page, 'note').inputValue(), 'changed elsewhere');
  });

  test('when a read-only key signs in, then it sees values but no edit button, no new key, no admin panel', async () => {
    await gw.hashes.set('ro:1', { f: 'v' });
    const page = await signedIn(reader.key);
    await open(page, 'ro:', 'ro:1');
    await page.waitForSelector('#hash-fields td.value[data-field="f"]');
    expect(await page.locator('#detail button').count()).toBe(0);
    expect(await page.locator('#detail input, #detail textarea').count()).toBe(0);
    expect(await page.isVisible('#new-key')).toBe(false);
    expect(await page.isVisible('#tab-service')).toBe(false);
  });

  test('when a user creates a key with a TTL, then it exists with that TTL; then deleting it removes it', async () => {
    const page = await signedIn(admin.key);
    await page.click('#new-key');
    await page.fill('#create-key', 'made:1');
    await page.selectOption('#create-type', 'zset');
    await page.fill('#create-a', 'alice');
    await page.fill('#create-b', '42');
    await page.fill('#create-ttl', '300');
    await page.click('#create');
    await page.waitForSelector('#detail[data-key="made:1"]');
    expect(await gw.zsets.range('made:1')).toMatchObject({ members: [{ member: 'alice', score: 42 }] });
    expect(await page.textContent('#ttl')).toMatch(/TTL: \d+ s/);
    await page.click('#delete-key');
    await page.click('#confirm-delete');
    await page.waitForSelector('#detail', { state: 'detached' });
    expect(await gw.keys.info('made:1')).toBeNull();
  });

  test('set members, list items and sorted-set scores are edited in place, and a TTL is set', async () => {
    await gw.sets.add('kinds:set', ['a', 'b']);
    await gw.lists.push('kinds:list', ['x', 'y']);
    await gw.zsets.add('kinds:zset', { alice: 1, bob: 2 });
    const page = await signedIn(admin.key);
    await open(page, 'kinds:', 'kinds:set');
    await page.click('button[data-remove-member="a"]');
    await settled(page);
    await page.fill('#new-member', 'c');
    await page.click('#add-member');
    await eventually(async () => (await gw.sets.get('kinds:set'))?.members.sort().join(','), 'b,c');
    await open(page, 'kinds:', 'kinds:list');
    await page.fill('input.item-value[data-index="1"]', 'Y');
    await page.click('button[data-save-index="1"]');
    await settled(page);
    await eventually(async () => (await gw.lists.range('kinds:list'))?.values.join(','), 'x,Y');
    await page.fill('#push-value', 'z');
    await page.click('#push');
    await eventually(async () => (await gw.lists.range('kinds:list'))?.values.join(','), 'x,Y,z');
    await open(page, 'kinds:', 'kinds:zset');
    await page.fill('input.score[data-member="alice"]', '10');
    await page.click('button[data-save-member="alice"]');
    await settled(page);
    await eventually(
      async () => JSON.stringify((await gw.zsets.range('kinds:zset')).members),
      '[{"member":"bob","score":2},{"member":"alice","score":10}]',
    );
    await page.fill('#ttl-input', '500');
    await page.click('#set-ttl');
    await page.waitForSelector('#persist');
    expect((await gw.keys.info('kinds:zset'))?.ttl).toBeGreaterThan(0);
  });

  test('a hash too large to be read whole shows its first page, still edited under If-Match', async () => {
    const fields = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, String(i)]));
    await gw.hashes.set('large:1', fields);
    const page = await signedIn(admin.key);
    await open(page, 'large:', 'large:1');
    await page.waitForSelector('#partial');
    const first = page.locator('input.field-value').first();
    const field = (await first.getAttribute('data-field')) as string;
    await first.fill('edited');
    await gw.hashes.setField('large:1', 'elsewhere', 'x');
    await page.click(`button[data-save-field="${field}"]`);
    await page.waitForSelector('#conflict');
    expect(await gw.hashes.getField('large:1', field)).toBe(field.slice(1));
  });

  test('a tenant key starts at its prefix and finds only its own keys', async () => {
    await gw.strings.set('tenant-b:mine', '1');
    await gw.strings.set('tenant-c:theirs', '1');
    const page = await signedIn(tenant.key);
    expect(await page.inputValue('#prefix')).toBe('tenant-b:');
    await page.waitForSelector('button.key[data-key="tenant-b:mine"]');
    expect(await page.locator('#key-list button.key').allTextContents()).toEqual(['tenant-b:mine']);
  });

  test('an admin sees the service charts, drawn from its statistics', async () => {
    const page = await signedIn(admin.key);
    await page.click('#tab-service');
    // Two samples make the first rates: a line with points.
    await page.waitForSelector('#chart-rate polyline[points*=","]', { state: 'attached' });
    // Data requests show under their route template.
    for (let i = 0; i < 6; i++) await gw.strings.get('charted');
    await page.waitForSelector('#chart-rate li:has-text("/store/string/{key}")');
    if (!SHOTS) return;
    // Some traffic for the picture: 10 s of a few requests a second.
    for (let i = 0; i < 20; i++) {
      await gw.strings.set(`traffic:${i % 5}`, String(i));
      await gw.hashes.get('user:42');
      await gw.strings.get('traffic:none');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await page.screenshot({ path: path.join(DOCS, 'console-service.png'), fullPage: true });
  }, 60_000);

  test('when no credentials are configured (npm start on a laptop), then a local browser goes straight in and edits a string', async () => {
    const open = await served('console-open');
    try {
      await open.t.raw.set(`${open.t.prefix}note:1`, 'first draft');
      const context = await b.browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      await page.goto(`${open.base}/console/`);
      await page.waitForSelector('#who');
      expect(await page.textContent('#who')).toContain('anonymous');
      await page.fill('#prefix', 'note:');
      await page.click('#search');
      await page.click('button.key[data-key="note:1"]');
      await page.fill('#string-value', 'second draft');
      await page.click('#save-string');
      await eventually(() => open.t.raw.get(`${open.t.prefix}note:1`), 'second draft');
      // This service has no change feed: the tab says how to turn it on.
      await page.click('#tab-changes');
      await page.waitForSelector('text=SVC_CHANGES_ENABLED=true');
    } finally {
      await open.close();
    }
  });

  test('no page script failed and the Content-Security-Policy refused nothing', () => {
    expect(problems).toEqual([]);
  });
});
