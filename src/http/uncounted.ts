// The mark the rate limiter leaves on a request it could not count, read by authentication (the failure policy).
import type { Response } from 'express';

const UNCOUNTED = 'rateLimitUncounted';

/** Marks the request as not counted: Redis failed, or was slow to answer, the limiter's counter call. */
export const markUncounted = (res: Response): void => {
  res.locals[UNCOUNTED] = true;
};

/**
 * True when the rate limiter could not count this request. The policy, applied by authentication
 * (auth/access.ts): an authenticated request goes on (fail open: the data call answers 503 on its own if Redis is
 * really down), any other one is refused with 503 (fail closed: credential guessing and anonymous traffic are never
 * unlimited).
 */
export const limiterFailed = (res: Response): boolean => res.locals[UNCOUNTED] === true;
