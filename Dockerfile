# The gateway image: compiled in a build stage, run from production dependencies only as the `node` user.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
COPY . .
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error && npm cache clean --force
# The service and the console it serves; not the benchmark or the test helpers that `npm run build` also compiles.
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/console ./dist/console
COPY openapi.yaml ./
USER node
EXPOSE 8080
# Any HTTP answer below 500 means the process serves: with API keys configured the ping itself answers 401.
# The admin port is the data port unless SVC_ADMIN_PORT says otherwise (src/config.ts).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SVC_ADMIN_PORT || process.env.SVC_PORT || 8080}/store/admin/ping`).then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"]
# With the service's V8 options and malloc settings (src/node-flags.ts: a small young generation, a fixed mmap
# threshold; docs/performance.md "Memory"); NODE_OPTIONS can add others. tests/node-flags.test.ts checks that these
# lines and node-flags.ts agree.
ENV MALLOC_MMAP_THRESHOLD_=65536
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]
