// chain(): several middleware as one router layer, behaving as consecutive layers would.
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { chain } from '../src/http/chain';

/** An app whose one layer is `chain(...handlers)`; then a route answering 'route', and an error handler. */
function app(...handlers: RequestHandler[]) {
  const a = express();
  a.use(chain(...handlers));
  a.get('/', (_req, res) => {
    res.send(`route ${res.locals.seen ?? ''}`);
  });
  a.use(((err, _req, res, _next) => {
    res.status(500).send(`error ${(err as Error).message}`);
  }) as express.ErrorRequestHandler);
  return a;
}

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.seen = `${res.locals.seen ?? ''}${name}`;
    next();
  };

test('when every handler calls next, then they run in order and the request goes on', async () => {
  const res = await request(app(mark('a'), mark('b'), mark('c'))).get('/');
  expect(res.text).toBe('route abc');
});

test('when a handler calls next asynchronously, then the next one still runs', async () => {
  const later: RequestHandler = async (_req, _res, next) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    next();
  };
  expect((await request(app(mark('a'), later, mark('b'))).get('/')).text).toBe('route ab');
});

test('when a handler throws, then the rest is skipped and the error handler answers', async () => {
  const boom: RequestHandler = () => {
    throw new Error('thrown');
  };
  expect((await request(app(mark('a'), boom, mark('b'))).get('/')).text).toBe('error thrown');
});

test('when a handler rejects, even without a reason, then the error handler answers', async () => {
  const rejects: RequestHandler = async () => {
    throw new Error('rejected');
  };
  const empty: RequestHandler = () => Promise.reject(undefined);
  expect((await request(app(rejects, mark('b'))).get('/')).text).toBe('error rejected');
  expect((await request(app(empty, mark('b'))).get('/')).text).toBe('error Rejected promise');
});

test('when a handler answers itself, then nothing after it runs', async () => {
  const answer: RequestHandler = (_req, res) => {
    res.send('answered');
  };
  expect((await request(app(answer, mark('b'))).get('/')).text).toBe('answered');
});
