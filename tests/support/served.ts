// A test app listening on a free loopback port: what HTTP clients (the TypeScript client, a browser) talk to.
import type { AddressInfo } from 'node:net';
import { type Listener, listen } from '../../src/http/server';
import { type TestApp, testApp } from './app';
import { feedApp } from './feed';

export interface Served {
  t: TestApp;
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

/** `testApp(name, env)` (or, with `feedDb`, `feedApp` on that database) listening on 127.0.0.1. */
export async function served(
  name: string,
  env: Record<string, string> = {},
  feedDb?: number,
): Promise<Served> {
  const t = feedDb === undefined ? await testApp(name, env) : await feedApp(name, feedDb, env);
  const listener: Listener = await listen(t.data, t.context, 0, '127.0.0.1');
  return {
    t,
    base: `http://127.0.0.1:${(listener.server.address() as AddressInfo).port}`,
    async close() {
      await listener.close(1000);
      await t.close();
    },
  };
}
