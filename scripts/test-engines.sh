#!/usr/bin/env bash
# `npm run test:engines`: the engine subset of the suite on Redis 8.0, Valkey 8.0 and Valkey 9.1 (docs/testing.md).
#
#   npm run test:engines                   # every engine
#   npm run test:engines -- valkey-9.1     # one (names as in scripts/engines.sh)
#
# Each engine comes from scripts/engines.sh (cached in .engines/); the test harness starts it through
# TEST_REDIS_SERVER, for the shared test Redis and for the Sentinel sets and Clusters the files start.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every data family, batches, /upstash, key listing (long walks too), the change feed, Sentinel and Cluster, TLS on
# all three, the provider profiles, the Functions library, queues, locks and rate limits.
FILES=(
  tests/harness.test.ts
  tests/strings.test.ts tests/hashes.test.ts tests/sets.test.ts tests/lists.test.ts tests/zsets.test.ts
  tests/counters.test.ts tests/hash-field-ttl.test.ts
  tests/batch-strings.test.ts tests/batch-hashes-sets.test.ts tests/batch-zsets.test.ts
  tests/upstash-http.test.ts tests/upstash-key-positions.test.ts
  tests/keys.test.ts tests/keys-walk.test.ts
  tests/managed-redis.test.ts tests/managed-redis-refusals.test.ts tests/redis-functions.test.ts tests/bounded-reads.test.ts tests/upstash-events.test.ts
  tests/queues.test.ts tests/locks.test.ts tests/semaphores.test.ts tests/ratelimits.test.ts
  tests/feed-events.test.ts
  tests/topologies.test.ts tests/cluster-data.test.ts
  tests/redis-tls.test.ts
)

engines=$(bash scripts/engines.sh "$@")
failed=()
for engine in $engines; do
  name=${engine%%=*}
  server=${engine#*=}
  printf '\n==> %s: %s\n' "$name" "$("$server" --version)"
  # The harness starts this engine rather than use a Redis named by REDIS_URL.
  env -u REDIS_URL TEST_REDIS_SERVER="$server" npx jest "${FILES[@]}" || failed+=("$name")
done
if [ ${#failed[@]} -gt 0 ]; then
  printf '\nfailed on: %s\n' "${failed[*]}"
  exit 1
fi
