// Pages for people, outside /store: an index at /, Swagger UI at /docs and the document itself at /openapi.yaml.
import { type RequestHandler, Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import { methodNotAllowed } from './routes';
import { sendJson } from './send';

/** The body of `GET /`: what this is, and where to read on. */
export interface Index {
  name: string;
  version: string;
  links: Record<string, string>;
}

const route =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.route = name;
    next();
  };

export function docs(file: string, index: Index): Router {
  const router = Router();
  // A first request to the bare address (a browser, curl) learns where the documentation is.
  router.get('/', route('/'), (_req, res) => sendJson(res, 200, index));
  router.get('/openapi.yaml', route('/openapi.yaml'), (_req, res) => {
    res.sendFile(file, { headers: { 'Content-Type': 'application/yaml; charset=utf-8' } });
  });
  // Other methods (OPTIONS included) answer 405 as on every /store path, not Express's automatic OPTIONS 200.
  router.all(['/', '/openapi.yaml'], (req, res) => {
    res.locals.route = 'unknown';
    throw methodNotAllowed(req, ['GET']);
  });
  // The static assets answer GET and HEAD only and pass anything else on to the 404 fallback;
  // GET /docs is redirected to /docs/ so that the page's relative asset URLs resolve. The page loads the
  // document from /openapi.yaml (relative, so that it also works behind a proxy's path prefix) rather than
  // carrying a copy of it: the service keeps no parsed document in memory.
  const options = { swaggerUrl: '../openapi.yaml' };
  router.use('/docs', route('/docs'), ...swaggerUi.serveFiles(undefined, options));
  router.get('/docs/', swaggerUi.setup(undefined, options));
  return router;
}
