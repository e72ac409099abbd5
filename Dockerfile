# The gateway image: compiled in a build stage, run from production dependencies only as the `node` user.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install --no-save` only when `npm ci` refuses the lock (one written through a mirror that lacks other
# platforms' optional binaries); it installs the same locked versions. Drop it once the lock lists them all.
RUN npm ci --no-audit --no-fund || npm install --no-save --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN (npm ci --omit=dev --no-audit --no-fund || npm install --no-save --omit=dev --no-audit --no-fund) \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY openapi.yaml ./
USER node
EXPOSE 8080
# Any HTTP answer below 500 means the process serves: with API keys configured the ping itself answers 401.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SVC_ADMIN_PORT || 8080}/store/admin/ping`).then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/src/main.js"]
