// Web pages in headless Chromium against a service in protected mode: a page on another site (form post to the
// admin flush, no-cors fetch to a set pop, the change feed's WebSocket) and a page reached by DNS rebinding change
// nothing; a page on an origin listed in SVC_CORS_ORIGINS can do the same with fetch and the WebSocket.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { browserSuite } from './support/browser';
import { served } from './support/served';

/** A site that serves an empty page at every path: the attacker's, or the allowed app's. */
async function site(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end('<!doctype html><title>page</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let svc: string;
let evil: Awaited<ReturnType<typeof site>>;
let app: Awaited<ReturnType<typeof site>>;
const b = browserSuite(
  async () => {
    [evil, app] = await Promise.all([site(), site()]);
    const s = await served(
      'browsers-chromium',
      { SVC_PROTECTED_MODE: 'true', SVC_CORS_ORIGINS: `http://app.test:${app.port}` },
      9,
    );
    svc = `http://127.0.0.1:${new URL(s.base).port}`;
    return s;
  },
  {
    // evil.test, app.test and rebind.test all resolve to this machine, as a rebinding attacker's name does.
    flags: [
      '--host-resolver-rules=MAP evil.test 127.0.0.1, MAP app.test 127.0.0.1, MAP rebind.test 127.0.0.1',
    ],
    beforeClose: async () => {
      await evil?.close();
      await app?.close();
    },
  },
);
const key = (name: string) => `${b.s.t.prefix}${name}`;

async function pageAt(origin: string): Promise<Page> {
  const page = await (await b.browser.newContext()).newPage();
  await page.goto(`${origin}/`);
  return page;
}

/** Submits a form from `page` to `action` and waits for the answer's navigation; returns its status. */
async function formPost(page: Page, action: string, enctype: string): Promise<number | undefined> {
  const [answer] = await Promise.all([
    page.waitForNavigation(),
    // A script string: the page's DOM (document) is not in the test's TypeScript library.
    page.evaluate(`{
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = ${JSON.stringify(action)};
      form.enctype = ${JSON.stringify(enctype)};
      const field = document.createElement('input');
      field.name = 'x';
      field.value = '1';
      form.append(field);
      document.body.append(form);
      form.submit();
    }`),
  ]);
  return answer?.status();
}

/** The status of a fetch from the page (0 when the answer is opaque, -1 when the fetch failed). */
const fetchFrom = (page: Page, url: string, init: RequestInit) =>
  page.evaluate(
    async ([u, i]) => {
      try {
        return (await fetch(u as string, i as RequestInit)).status;
      } catch {
        return -1;
      }
    },
    [url, init] as const,
  );

/** Opens the feed's WebSocket from the page: 'open' or 'refused'. */
const socketFrom = (page: Page, url: string) =>
  page.evaluate(
    (u) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(u);
        ws.onopen = () => resolve('open');
        ws.onerror = () => resolve('refused');
      }),
    url,
  );

b.describe('a page on another site', () => {
  test.each(['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data'])(
    'when it posts a %s form to the admin flush, then 403 and nothing is removed',
    async (enctype) => {
      await b.s.t.raw.set(key('keep'), 'v');
      const page = await pageAt(`http://evil.test:${evil.port}`);
      expect(await formPost(page, `${svc}/store/admin/flush`, enctype)).toBe(403);
      expect(await b.s.t.raw.get(key('keep'))).toBe('v');
    },
  );

  test('when it sends a no-cors fetch POST to a set pop, then the set keeps its member', async () => {
    await b.s.t.raw.sadd(key('tags'), 'go');
    const page = await pageAt(`http://evil.test:${evil.port}`);
    expect(await fetchFrom(page, `${svc}/store/set/tags/pop`, { method: 'POST', mode: 'no-cors' })).toBe(0);
    expect(await fetchFrom(page, `${svc}/store/set/tags/pop`, { method: 'POST' })).toBe(-1);
    expect(await b.s.t.raw.smembers(key('tags'))).toEqual(['go']);
  });

  test('when it loads a path-form write as an image, then nothing is written', async () => {
    const page = await pageAt(`http://evil.test:${evil.port}`);
    const src = JSON.stringify(`${svc}/upstash/set/img-write/x`);
    await page.evaluate(`new Promise((resolve) => {
      const img = new Image();
      img.onload = img.onerror = resolve;
      img.src = ${src};
    })`);
    expect(await b.s.t.raw.exists(key('img-write'))).toBe(0);
  });

  test('when it opens the change feed’s WebSocket, then the handshake is refused', async () => {
    const page = await pageAt(`http://evil.test:${evil.port}`);
    expect(await socketFrom(page, `ws://127.0.0.1:${new URL(b.s.base).port}/store/changes/ws`)).toBe(
      'refused',
    );
  });
});

b.describe('a page reached through DNS rebinding', () => {
  test('when its name now points at the service, then its same-origin requests are refused with 403', async () => {
    await b.s.t.raw.set(key('keep-rebind'), 'v');
    await b.s.t.raw.sadd(key('rebind-tags'), 'go');
    const origin = `http://rebind.test:${new URL(b.s.base).port}`;
    const page = await (await b.browser.newContext()).newPage();
    const first = await page.goto(`${origin}/store/admin/ping`);
    expect(first?.status()).toBe(403);
    // Same-origin now: the Origin check passes, only the Host check stands.
    expect(await fetchFrom(page, `${origin}/store/admin/flush`, { method: 'POST' })).toBe(403);
    expect(await fetchFrom(page, `${origin}/store/set/rebind-tags/pop`, { method: 'POST' })).toBe(403);
    expect(await socketFrom(page, `ws://rebind.test:${new URL(b.s.base).port}/store/changes/ws`)).toBe(
      'refused',
    );
    expect(await b.s.t.raw.get(key('keep-rebind'))).toBe('v');
    expect(await b.s.t.raw.scard(key('rebind-tags'))).toBe(1);
  });
});

b.describe('a page on an origin in SVC_CORS_ORIGINS', () => {
  test('when it fetches a set pop and the admin flush (no Content-Type, as curl), then both run', async () => {
    await b.s.t.raw.sadd(key('app-tags'), 'go');
    const page = await pageAt(`http://app.test:${app.port}`);
    const popped = await page.evaluate(async (u) => {
      const res = await fetch(u, { method: 'POST' });
      return [res.status, await res.json()];
    }, `${svc}/store/set/app-tags/pop`);
    expect(popped).toEqual([200, { success: true, member: 'go' }]);
    await b.s.t.raw.set(key('app-keep'), 'v');
    expect(await fetchFrom(page, `${svc}/store/admin/flush`, { method: 'POST', mode: 'no-cors' })).toBe(0);
    expect(await b.s.t.raw.exists(key('app-keep'))).toBe(0);
  });

  test('when it opens the change feed’s WebSocket, then it receives the next change', async () => {
    const page = await pageAt(`http://app.test:${app.port}`);
    // From the stream's start: the write may be appended before the subscription has chosen where it starts.
    const url = `ws://127.0.0.1:${new URL(b.s.base).port}/store/changes/ws?since=0-0`;
    const event = page.evaluate(
      (u) =>
        new Promise<string>((resolve, reject) => {
          const ws = new WebSocket(u);
          ws.onmessage = (m) => {
            const e = JSON.parse(String(m.data));
            if (e.key === 'ws-seen') resolve(e.key);
          };
          ws.onopen = () => {
            fetch(
              (u.split('?')[0] as string).replace('ws:', 'http:').replace('/changes/ws', '/string/ws-seen'),
              {
                method: 'POST',
                headers: { 'Content-Type': 'application/json' },
                body: JSON.stringify({ value: 'v' }),
              },
            ).catch(reject);
          };
          ws.onerror = () => reject(new Error('refused'));
        }),
      url,
    );
    expect(await event).toBe('ws-seen');
  });
});
