// The layers of src/ and what each may import, checked by `npm run lint` (dependency-cruiser). From the bottom:
//   errors, config, settings     the error table and the configuration
//   redis/                       connections, keys, scripts, the facts about Redis types and change events
//   ops/                         the operation catalogue: each operation's commands and how replies become outcomes
//   engine/                      runs operations against Redis (one, a batch, a blocking wait)
//   families/                    each data family declared once: routes, batch items (with ops/)
//   http/                        the transport: validation from the contract, auth, rate limits, listeners
//   routes/, admin/, feed/, ...  route groups: HTTP <-> operations, admin work, the change feed
//   context.ts, app.ts, service.ts, main.ts   the composition
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle ties its modules into one: none may be read, tested or changed alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'redis-below-the-rest',
      severity: 'error',
      comment: 'redis/ knows Redis, not what the service does with it.',
      from: { path: '^src/redis/' },
      to: { path: '^src/', pathNot: '^src/(redis/|errors\\.ts$|config\\.ts$|settings?\\.ts$|paths\\.ts$)' },
    },
    {
      name: 'ops-are-a-catalogue',
      severity: 'error',
      comment:
        'An operation says what to send and what the replies mean; the engine runs it, routes expose it.',
      from: { path: '^src/ops/' },
      to: {
        path: '^src/(engine|families|routes|http|admin|feed|upstash)/|^src/(context|app|service|main)\\.ts$',
      },
    },
    {
      name: 'engine-runs-operations-only',
      severity: 'error',
      comment: 'The engine sends commands; it does not know families, routes or HTTP.',
      from: { path: '^src/engine/' },
      to: { path: '^src/(families|routes|http|admin|feed|upstash)/|^src/(context|app|service|main)\\.ts$' },
    },
    {
      name: 'families-are-declarations',
      severity: 'error',
      comment:
        "A family declares routes over its operations, in the contract's terms (http/contract.ts; http/bytes-body.ts for what Accept asks), nothing more.",
      from: { path: '^src/families/' },
      to: {
        path: '^src/(engine|routes|admin|feed|upstash)/|^src/http/(?!(contract|bytes-body)\\.ts$)|^src/(context|app|service|main)\\.ts$',
      },
    },
    {
      name: 'http-is-the-transport',
      severity: 'error',
      comment:
        'http/ takes what a transport needs (http/transport.ts), never the composition, a family, the engine or a route group; http/send.ts answers an outcome with its ETag (ops/etag.ts).',
      from: { path: '^src/http/' },
      to: {
        path: '^src/(families|engine|routes|admin|feed|upstash|contract-gen)/|^src/(context|app|service|main|reload)\\.ts$',
      },
    },
    {
      name: 'http-answers-outcomes-only',
      severity: 'error',
      comment: 'Of the operation catalogue, http/ uses only the outcome and its ETag, in http/send.ts.',
      from: { path: '^src/http/', pathNot: '^src/http/send\\.ts$' },
      to: { path: '^src/ops/' },
    },
    {
      name: 'composition-on-top',
      severity: 'error',
      comment:
        'app.ts builds the apps, service.ts the whole service, main.ts runs it: nothing below imports them.',
      from: { pathNot: '^src/(service|main)\\.ts$' },
      to: { path: '^src/(app|service|main)\\.ts$' },
    },
    {
      name: 'contract-gen-is-a-tool',
      severity: 'error',
      comment:
        'The contract generator writes openapi.yaml; the running service reads that file, never the generator.',
      from: { path: '^src/', pathNot: '^src/contract-gen/' },
      to: { path: '^src/contract-gen/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle of types is still a circle to read.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
