// Polling instead of sleeping: waits until a condition holds, bounded, never a timed assertion.

/**
 * Polls until `check` answers a truthy value, and returns it; fails after `ms` (generous: the machine is shared),
 * never races real time.
 */
export async function until<T>(check: () => T | Promise<T>, ms = 20_000): Promise<Truthy<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Promise of a supertest request's response, started now (supertest sends on then()). */
export const started = <T>(req: PromiseLike<T>) =>
  new Promise<T>((resolve, reject) => req.then(resolve, reject));
