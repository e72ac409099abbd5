// The contract for people: Swagger UI at /docs and the document itself at /openapi.yaml (outside /store).
import { type RequestHandler, Router } from 'express';
import swaggerUi from 'swagger-ui-express';

const route =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.route = name;
    next();
  };

export function docs(document: Record<string, unknown>, file: string): Router {
  const router = Router();
  router.get('/openapi.yaml', route('/openapi.yaml'), (_req, res) => {
    res.sendFile(file, { headers: { 'Content-Type': 'application/yaml; charset=utf-8' } });
  });
  // The static assets answer GET and HEAD only and pass anything else on to the 404 fallback;
  // GET /docs is redirected to /docs/ so that the page's relative asset URLs resolve.
  router.use('/docs', route('/docs'), ...swaggerUi.serveFiles(document));
  router.get('/docs/', swaggerUi.setup(document));
  return router;
}
