// Baseline (a): Express 5 answering the GET string route with a fixed JSON body and no Redis at all.
// Express's own per-request cost is the ceiling for the service, which runs on Express.
import express from 'express';

const body = { value: process.env.BENCH_VALUE ?? '', ttl: -1 };
const app = express();
app.get('/store/string/:key', (_req, res) => {
  res.json(body);
});
app.listen(Number(process.env.PORT), '127.0.0.1');
