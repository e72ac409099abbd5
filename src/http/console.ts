// The web console at /console: the static files `npm run build` makes (dist/console), under a strict CSP.
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler, Router } from 'express';
import { ApiError } from '../errors';
import { findUp } from '../paths';

/** Where `npm run build` (scripts/build-console.mjs) writes the console. */
export const CONSOLE_DIR = path.join(path.dirname(findUp('package.json')), 'dist', 'console');

/**
 * Only this origin's own files: no inline script or style, no other origin to fetch from or be framed by. The
 * console talks to the API of the same origin, so `connect-src 'self'` is all it needs.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const protect: RequestHandler = (_req, res, next) => {
  res.locals.route = '/console';
  res.set({
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cache-Control': 'no-cache',
  });
  next();
};

const built: RequestHandler = (_req, _res, next) => {
  if (existsSync(path.join(CONSOLE_DIR, 'index.html'))) return next();
  throw new ApiError(
    'unknown_endpoint',
    'The console is not built: run `npm run build` (see docs/console.md)',
  );
};

/** GET /console redirects to /console/ (the page's relative asset URLs need it); other methods fall through. */
export function consoleRoutes(): Router {
  const router = Router();
  router.use(
    '/console',
    protect,
    built,
    express.static(CONSOLE_DIR, { index: 'index.html', redirect: true }),
  );
  return router;
}
