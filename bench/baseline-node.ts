// Baseline (b): plain node:http + ioredis doing the same GET: what one process can do with no framework.
// Auto-pipelining is on, as in the service, so the difference between the two is the HTTP layer and middleware.
import http from 'node:http';
import Redis from 'ioredis';

const PREFIX = '/store/string/';
const redis = new Redis(process.env.REDIS_URL as string, { enableAutoPipelining: true });

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

http
  .createServer((req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith(PREFIX)) return answer(res, 404, { error: 'unknown' });
    redis.get(decodeURIComponent(req.url.slice(PREFIX.length))).then(
      (value) =>
        value === null ? answer(res, 404, { error: 'not_found' }) : answer(res, 200, { value, ttl: -1 }),
      () => answer(res, 503, { error: 'service_unavailable' }),
    );
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
