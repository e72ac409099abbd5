#!/usr/bin/env bash
# Runs @upstash/ratelimit's own test suite (upstash/ratelimit-js, `bun test src`) against this gateway's /upstash
# endpoint: its own redis-server and service on free loopback ports, an unprefixed admin key (the suite
# runs SCRIPT LOAD, SCRIPT FLUSH and FLUSHDB), everything stopped by PID.
# Not run by CI (needs a ratelimit-js checkout with its dev dependencies and a bun binary; see docs/upstash.md).
#
#   npm run build && scripts/ratelimit-suite.sh /tmp/rl /tmp/rlbun/node_modules/@oven/bun-linux-x64/bin/bun
set -euo pipefail
RL_DIR=${1:?usage: ratelimit-suite.sh <ratelimit-js dir> <bun binary>}
BUN=${2:?usage: ratelimit-suite.sh <ratelimit-js dir> <bun binary>}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
REDIS_PORT=$(free_port)
SVC_PORT=$(free_port)
KEY="rl-suite-$(node -e "console.log(require('crypto').randomBytes(12).toString('hex'))")"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 143' INT TERM

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
SVC_PORT=$SVC_PORT SVC_REDIS_URL="redis://127.0.0.1:$REDIS_PORT" SVC_RATE_LIMIT_ENABLED=false \
  SVC_API_KEYS="{\"keys\":[{\"id\":\"rl-suite\",\"key\":\"$KEY\",\"permissions\":[\"read\",\"write\",\"admin\"]}]}" \
  node "$ROOT/dist/src/main.js" >"$WORK/svc.log" 2>&1 &
PIDS+=($!)

URL="http://127.0.0.1:$SVC_PORT/upstash"
for _ in $(seq 1 60); do
  curl -sf -XPOST "$URL" -H "Authorization: Bearer $KEY" -d '["PING"]' >/dev/null && break
  sleep 0.5
done

# The multi-region tests read US1_/APN_/EU2_ credentials: all three point at the same gateway.
export UPSTASH_REDIS_REST_URL=$URL UPSTASH_REDIS_REST_TOKEN=$KEY
for region in US1 APN EU2; do export "${region}_UPSTASH_REDIS_REST_URL=$URL" "${region}_UPSTASH_REDIS_REST_TOKEN=$KEY"; done
cd "$RL_DIR"
timeout 600 "$BUN" test src
