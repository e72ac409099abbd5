// Where the admin endpoints are served: on the data port, on their own listener, or not at all.
import request from 'supertest';
import { testApp } from './support/app';
import { responseProblems } from './support/schemas';

describe('when SVC_ADMIN_PORT equals SVC_PORT', () => {
  test('then the data app serves the admin endpoints and there is no admin app', async () => {
    const t = await testApp('listeners-same', { SVC_PORT: '8080', SVC_ADMIN_PORT: '8080' });
    try {
      expect(t.admin).toBeUndefined();
      expect((await request(t.data).get('/store/admin/ping')).status).toBe(200);
      expect((await request(t.data).put('/store/admin/ping')).status).toBe(405);
    } finally {
      await t.close();
    }
  });
});

describe('when SVC_ADMIN_PORT is unset', () => {
  test('then admin follows SVC_PORT: one listener, whatever the data port', async () => {
    const t = await testApp('listeners-unset', { SVC_PORT: '18601' });
    try {
      expect(t.context.config.admin.port).toBe(18601);
      expect(t.admin).toBeUndefined();
      expect((await request(t.data).get('/store/admin/ping')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('when SVC_ADMIN_PORT differs from SVC_PORT', () => {
  test('then the admin app serves the admin endpoints and the data app answers 404 for them', async () => {
    const t = await testApp('listeners-own', { SVC_PORT: '8080', SVC_ADMIN_PORT: '9090' });
    try {
      if (!t.admin) throw new Error('expected an admin app');
      const onAdmin = await request(t.admin).get('/store/admin/ping');
      expect(onAdmin.status).toBe(200);
      expect(onAdmin.headers['x-request-id']).toBeDefined();
      expect((await request(t.admin).get('/api/admin/health')).status).toBe(200);
      const onData = await request(t.data).get('/store/admin/ping');
      expect(onData.status).toBe(404);
      expect(onData.body.error).toBe('unknown_endpoint');
      expect(onData.body.message).toBe(
        'No endpoint GET /store/admin/ping on this port: admin endpoints are served on port 9090',
      );
      const flush = await request(t.data).post('/api/admin/flush').set('Content-Type', 'application/json');
      expect(flush.status).toBe(404);
      expect(flush.body.message).toContain('admin endpoints are served on port 9090');
    } finally {
      await t.close();
    }
  });

  test('then the admin app serves no data endpoint, and knows 405 for its own paths only', async () => {
    const t = await testApp('listeners-own-data', { SVC_PORT: '8080', SVC_ADMIN_PORT: '9090' });
    try {
      if (!t.admin) throw new Error('expected an admin app');
      const res = await request(t.admin).get('/store/string/some-key');
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('unknown_endpoint');
      const wrongMethod = await request(t.admin).delete('/store/admin/stats');
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.allow).toBe('GET, HEAD');
      expect((await request(t.data).get('/store/string/some-key')).body.error).toBe('not_found');
    } finally {
      await t.close();
    }
  });

  test('then both listeners count into the same statistics', async () => {
    const t = await testApp('listeners-stats', { SVC_PORT: '8080', SVC_ADMIN_PORT: '9090' });
    try {
      if (!t.admin) throw new Error('expected an admin app');
      await request(t.data).get('/store/string/k/exists');
      const res = await request(t.admin).get('/store/admin/stats');
      expect(res.body.requests.by_endpoint['/store/string']).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe('when SVC_ADMIN_ENABLED=false', () => {
  test('then every admin path is 404 unknown_endpoint, and the data endpoints still work', async () => {
    const t = await testApp('listeners-off', { SVC_ADMIN_ENABLED: 'false', SVC_ADMIN_PORT: '9090' });
    try {
      expect(t.admin).toBeUndefined();
      for (const path of ['ping', 'health', 'stats', 'metrics']) {
        const res = await request(t.data).get(`/store/admin/${path}`);
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('unknown_endpoint');
        expect(res.body.message).not.toContain('served on port');
      }
      expect(
        (await request(t.data).post('/store/admin/flush').set('Content-Type', 'application/json')).status,
      ).toBe(404);
      expect((await request(t.data).get('/store/string/k/exists')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('when SVC_METRICS_ENABLED=false', () => {
  test('then metrics is 404 unknown_endpoint and the other admin endpoints still answer', async () => {
    const t = await testApp('listeners-nometrics', { SVC_METRICS_ENABLED: 'false' });
    try {
      const res = await request(t.data).get('/store/admin/metrics');
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('unknown_endpoint');
      expect((await request(t.data).get('/store/admin/stats')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('the contract for people', () => {
  test('GET / answers a JSON index: name, version and links to the docs, the document, health and the console', async () => {
    const t = await testApp('listeners-index');
    try {
      const res = await request(t.data).get('/');
      expect(res.status).toBe(200);
      expect(responseProblems('get', '/', 200, res.body)).toBe('');
      expect(res.body).toEqual({
        name: 'redis-http-gateway',
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        links: {
          docs: '/docs',
          openapi: '/openapi.yaml',
          health: '/store/admin/health',
          console: '/console/',
        },
      });
      for (const link of Object.values(res.body.links as Record<string, string>)) {
        expect((await request(t.data).get(link)).status).toBeLessThan(400);
      }
    } finally {
      await t.close();
    }
  });

  test('when admin has its own port, then GET / links no health check on the data port', async () => {
    const t = await testApp('listeners-index-own', { SVC_PORT: '8080', SVC_ADMIN_PORT: '9090' });
    try {
      const res = await request(t.data).get('/');
      expect(res.body.links).toEqual({ docs: '/docs', openapi: '/openapi.yaml', console: '/console/' });
    } finally {
      await t.close();
    }
  });

  test('GET /openapi.yaml serves the document as application/yaml', async () => {
    const t = await testApp('listeners-docs');
    try {
      const res = await request(t.data).get('/openapi.yaml');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/yaml/);
      expect(res.text).toMatch(/^openapi: 3\.1/m);
    } finally {
      await t.close();
    }
  });

  test('GET /docs leads to the Swagger UI page of the served document; other paths under it are 404', async () => {
    const t = await testApp('listeners-swagger');
    try {
      const redirect = await request(t.data).get('/docs');
      expect(redirect.status).toBe(301);
      expect(redirect.headers.location).toBe('/docs/');
      const page = await request(t.data).get('/docs/');
      expect(page.status).toBe(200);
      expect(page.text).toContain('swagger-ui');
      // The page loads the served document (GET /openapi.yaml above) by a URL relative to /docs/.
      const init = await request(t.data).get('/docs/swagger-ui-init.js');
      expect(init.text).toContain('"swaggerUrl": "../openapi.yaml"');
      expect((await request(t.data).get('/docs/no-such-file')).body.error).toBe('unknown_endpoint');
    } finally {
      await t.close();
    }
  });
});
