// The TypeScript client's change feed (SVC_CHANGES_ENABLED=true): a subscription over streamed Server-Sent Events
// that resumes by itself after the last event when the connection breaks, and long-poll pages.
import { type ChangeEvent, createGateway } from '../clients/typescript/src/index';
import { inbox } from './support/feed';
import { type Served, served } from './support/served';

let s: Served;
beforeAll(async () => {
  s = await served('client-feed', {}, 7);
});
afterAll(() => s.close());

/** A fetch whose first event stream breaks (as a dropped connection would) once it delivered an event. */
function breakingFetch() {
  let broken = 0;
  let streams = 0;
  const wrapped = async (input: Request | string | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    if (request.headers.get('Accept') !== 'text/event-stream' || !response.body) return response;
    streams++;
    if (broken > 0) return response;
    broken++;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        if (new TextDecoder().decode(value).includes('data:')) {
          await reader.cancel();
          controller.error(new TypeError('connection reset'));
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: wrapped, streams: () => streams };
}

test('when the stream breaks after an event, then the subscription resumes after it: nothing lost, nothing twice', async () => {
  const net = breakingFetch();
  const gw = createGateway({ baseUrl: s.base, fetch: net.fetch });
  const events = inbox<ChangeEvent>();
  const opened = inbox<true>();
  const errors: unknown[] = [];
  const sub = gw.changes.subscribe({
    prefix: 'feed:',
    onEvent: (e) => events.push(e),
    onOpen: () => opened.push(true),
    onError: (e) => errors.push(e),
    reconnectDelayMs: 50,
  });
  try {
    await opened.waitFor(1);
    await gw.strings.set('feed:a', '1');
    await events.waitFor(1);
    // The first stream broke after that event; these are written while the client reconnects or once it did.
    await gw.hashes.set('feed:b', { f: 'v' });
    await gw.strings.delete('feed:a');
    const got = await events.waitFor(3);
    expect(got.map((e) => [e.key, e.op])).toEqual([
      ['feed:a', 'set'],
      ['feed:b', 'hset'],
      ['feed:a', 'del'],
    ]);
    expect(net.streams()).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(sub.lastEventId).toBe(got[2]?.id);
  } finally {
    sub.close();
    await sub.done;
  }
});

test('when a subscription starts from `since`, then it first gets what came after it', async () => {
  const gw = createGateway({ baseUrl: s.base });
  const first = await gw.changes.poll({ prefix: 'since:', wait: 0 });
  await gw.strings.set('since:x', '1');
  await gw.strings.set('since:y', '2');
  const events = inbox<ChangeEvent>();
  const sub = gw.changes.subscribe({ since: first.next, prefix: 'since:', onEvent: (e) => events.push(e) });
  try {
    expect((await events.waitFor(2)).map((e) => e.key)).toEqual(['since:x', 'since:y']);
  } finally {
    sub.close();
    await sub.done;
  }
});

test('long-poll: a page after `since`, and `next` to go on from', async () => {
  const gw = createGateway({ baseUrl: s.base });
  const start = await gw.changes.poll({ prefix: 'poll:', wait: 0 });
  await gw.lists.push('poll:q', ['a']);
  const page = await gw.changes.poll({ since: start.next, prefix: 'poll:', wait: 5 });
  expect(page.events.map((e) => [e.key, e.op])).toEqual([['poll:q', 'rpush']]);
  const empty = await gw.changes.poll({ since: page.next, prefix: 'poll:', wait: 0 });
  expect(empty.events).toEqual([]);
});
