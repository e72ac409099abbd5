// The web console's files at /console: served from the build, under a strict Content-Security-Policy, without
// credentials; off with SVC_CONSOLE_ENABLED=false.
import request from 'supertest';
import { CONSOLE_CSP } from '../src/http/console';
import { type TestApp, testApp } from './support/app';
import { apiKey } from './support/auth';

const key = apiKey('console-http', ['read']);
let t: TestApp;
beforeAll(async () => {
  t = await testApp('console', { SVC_API_KEYS: JSON.stringify({ keys: [key] }) });
});
afterAll(() => t.close());

describe('the console', () => {
  test('when a browser opens /console, then it is sent to /console/, the page, with no credentials asked', async () => {
    const redirect = await request(t.data).get('/console');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/console/');
    const page = await request(t.data).get('/console/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<script type="module" src="app.js"></script>');
  });

  test('every console answer carries a CSP that allows no inline script or style and no other origin', async () => {
    for (const path of ['/console/', '/console/app.js', '/console/app.css', '/console/missing.js']) {
      const res = await request(t.data).get(path);
      expect([path, res.headers['content-security-policy']]).toEqual([path, CONSOLE_CSP]);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("style-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });

  test('the page has no inline script or style: only its own files', async () => {
    const page = (await request(t.data).get('/console/')).text;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });

  test('a missing file is the usual JSON 404', async () => {
    const res = await request(t.data).get('/console/missing.js');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('unknown_endpoint');
  });

  test('GET / links to the console', async () => {
    expect((await request(t.data).get('/')).body.links.console).toBe('/console/');
  });
});

test('when SVC_CONSOLE_ENABLED=false, then /console is a 404 and GET / does not link to it', async () => {
  const off = await testApp('console-off', { SVC_CONSOLE_ENABLED: 'false' });
  try {
    const res = await request(off.data).get('/console/');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('unknown_endpoint');
    expect((await request(off.data).get('/')).body.links.console).toBeUndefined();
  } finally {
    await off.close();
  }
});
