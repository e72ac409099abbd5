// Polling instead of sleeping: waits until a condition holds, bounded, never a timed assertion.

/** Polls until `check` holds; fails after `ms` (generous: the machine is shared), never races real time. */
export async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Promise of a supertest request's response, started now (supertest sends on then()). */
export const started = <T>(req: PromiseLike<T>) =>
  new Promise<T>((resolve, reject) => req.then(resolve, reject));
