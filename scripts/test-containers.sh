#!/usr/bin/env bash
# `npm run test:containers`: the project's Dockerfile and docker-compose.yml, and the tests' testcontainers Redis, run
# for real on a machine with no image registry (docs/testing.md "Containers"). Starts a Docker engine when none
# answers, builds local stand-ins for the base images the two files name (tagged with exactly those names), runs
# `docker compose up --build --wait` and checks the README's promises through the published port
# (scripts/containers/check.mjs), then runs a subset of the suite with its Redis from testcontainers.
# Options (environment): CONTAINERS_SKIP_COMPOSE=1 / CONTAINERS_SKIP_TESTCONTAINERS=1 skip a half;
# CONTAINERS_KEEP_ENGINE=1 leaves an engine this script started running; CONTAINERS_CA_FILE names the CA bundle npm
# trusts inside the build (default: NODE_EXTRA_CA_CERTS, else the system bundle). Needs root (or sudo) to install.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HERE=$ROOT/scripts/containers
PROJECT=gateway-containers-test
STANDIN_BASE=gateway-standin-base:latest
# The suite's subset that runs on the testcontainers Redis: every family, batches, the feed.
TC_TESTS=(tests/strings.test.ts tests/counters.test.ts tests/hashes.test.ts tests/sets.test.ts tests/lists.test.ts
  tests/zsets.test.ts tests/keys.test.ts tests/batch-strings.test.ts tests/batch-hashes-sets.test.ts
  tests/batch-zsets.test.ts tests/feed-poll.test.ts tests/feed-sse.test.ts tests/feed-ws.test.ts)

say() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'test-containers: %s\n' "$*" >&2
  exit 1
}
sudo_cmd=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo -n); fi

apt_updated=no
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  local apt=("${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300)
  if [ "$apt_updated" = no ]; then "${apt[@]}" update -qq && apt_updated=yes; fi
  "${apt[@]}" install -y -qq --no-install-recommends "$@"
}

# The Debian mirror this machine's apt uses for its own release (deb822 .sources or one-line sources.list).
apt_mirror() {
  local codename=$1 uri
  uri=$( (cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; echo) | awk -v c="$codename" '
      /^[ \t]*$/ { if (uri != "" && !found && suites ~ "(^| )" c "( |$)") { print uri; found = 1 } uri = ""; suites = ""; next }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { $1 = ""; suites = $0; sub(/^ /, "", suites) }')
  [ -n "$uri" ] || uri=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true) |
    sed -E 's/\[[^]]*\]//' | awk -v c="$codename" '$1 == "deb" && $3 == c && !found { print $2; found = 1 }')
  [ -n "$uri" ] || die "no apt source for $codename in /etc/apt: cannot find a Debian mirror"
  echo "$uri"
}

# ---- the engine ----------------------------------------------------------------------------------------------------
started_engine=""
stop_engine() {
  if [ -n "$started_engine" ] && [ -z "${CONTAINERS_KEEP_ENGINE:-}" ]; then
    say "stopping the Docker engine this script started (pid $started_engine)"
    kill "$started_engine" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$started_engine" 2>/dev/null || return 0; sleep 0.5; done
  fi
}

ensure_engine() {
  if docker info >/dev/null 2>&1; then
    say "Docker engine answers: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
    return
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    say "no Docker engine: apt-get install docker.io"
    apt_install docker.io
    # With systemd, the package starts an engine itself.
    for _ in $(seq 1 10); do docker info >/dev/null 2>&1 && return; sleep 0.5; done
  fi
  command -v docker >/dev/null 2>&1 || die "no docker client on the PATH"
  local log=${TMPDIR:-/tmp}/gateway-dockerd.log driver
  for driver in overlay2 vfs; do
    say "starting dockerd --storage-driver=$driver (log: $log)"
    "${sudo_cmd[@]}" setsid dockerd --storage-driver="$driver" >"$log" 2>&1 </dev/null &
    started_engine=$!
    for _ in $(seq 1 120); do
      if docker info >/dev/null 2>&1; then return; fi
      kill -0 "$started_engine" 2>/dev/null || break
      sleep 0.5
    done
    kill "$started_engine" 2>/dev/null || true
    wait "$started_engine" 2>/dev/null || true
    started_engine=""
    tail -n 5 "$log" >&2
  done
  die "dockerd did not start (log: $log)"
}

# ---- compose v2 and buildx: Debian 13's static plugins, fetched with a private apt state ---------------------------
ensure_plugins() {
  if docker compose version >/dev/null 2>&1 && docker buildx version >/dev/null 2>&1; then
    say "$(docker compose version)"
    return
  fi
  local plugins=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins work mirror
  work=$(mktemp -d)
  mirror=$(apt_mirror "$(. /etc/os-release && echo "$VERSION_CODENAME")")
  say "fetching the compose and buildx plugins (Debian trixie's docker-compose, docker-buildx)"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/parts" "$work/debs" "$plugins"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$work/sources.list"
  local opts=(-o APT::Sandbox::User=root -o "Dir::State=$work" -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts")
  apt-get "${opts[@]}" update -qq
  (cd "$work/debs" && apt-get "${opts[@]}" download docker-compose docker-buildx >/dev/null)
  local deb
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  install -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-compose" \
    "$work/root/usr/libexec/docker/cli-plugins/docker-buildx" "$plugins/"
  rm -rf "$work"
  say "$(docker compose version)"
}

# ---- stand-ins for the public base images --------------------------------------------------------------------------
ensure_base() {
  if docker image inspect "$STANDIN_BASE" >/dev/null 2>&1; then return; fi
  local codename mirror dir
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  mirror=$(apt_mirror "$codename")
  command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
  dir=$(mktemp -d)
  say "debootstrap --variant=minbase $codename (the machine's mirror) -> $STANDIN_BASE"
  "${sudo_cmd[@]}" debootstrap --variant=minbase "$codename" "$dir" "$mirror" >"$dir.log" 2>&1 ||
    {
      tail -n 20 "$dir.log" >&2
      die "debootstrap failed"
    }
  "${sudo_cmd[@]}" rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
  "${sudo_cmd[@]}" tar -C "$dir" -c . | docker import - "$STANDIN_BASE" >/dev/null
  "${sudo_cmd[@]}" rm -rf "$dir" "$dir.log"
}

# standin IMAGE: builds IMAGE (a name the project's files use) from scripts/containers/<family>.Dockerfile.
standin() {
  local image=$1 family=${1%%:*} ctx
  [ -f "$HERE/$family.Dockerfile" ] || die "no stand-in for the base image $image (scripts/containers/$family.Dockerfile)"
  ctx=$(mktemp -d)
  cp "$HERE/$family.Dockerfile" "$ctx/Dockerfile"
  case $family in
  node)
    local want=${image#node:} have
    want=${want%%[-.]*}
    have=$(node -p 'process.versions.node.split(".")[0]')
    [ "$want" = "$have" ] || say "warning: $image stands in with this machine's Node $(node --version)"
    cp "$(readlink -f "$(command -v node)")" "$ctx/node"
    cp -r "$(npm root -g)/npm" "$ctx/npm"
    local ca=${CONTAINERS_CA_FILE:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}
    if [ -f "$ca" ]; then
      cp "$ca" "$ctx/ca.crt"
      echo "cafile=/usr/local/etc/npm-ca.crt" >"$ctx/npmrc"
    else
      : >"$ctx/ca.crt"
      : >"$ctx/npmrc"
    fi
    ;;
  redis) cp "$HERE/redis-entrypoint.sh" "$ctx/" ;;
  esac
  say "stand-in $image"
  DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$STANDIN_BASE" -t "$image" "$ctx" >/dev/null 2>"$ctx.err" ||
    {
      cat "$ctx.err" >&2
      die "building the stand-in $image failed"
    }
  rm -rf "$ctx" "$ctx.err"
}

standins() {
  ensure_base
  local images
  # The images the Dockerfile and docker-compose.yml name, and the one the test harness asks testcontainers for.
  images=$( (
    awk 'toupper($1) == "FROM" { print $2 }' Dockerfile
    awk '$1 == "image:" { print $2 }' docker-compose.yml
    grep -o "GenericContainer('[^']*'" tests/support/global-setup.ts | cut -d"'" -f2
  ) | tr -d '"'"'" | sort -u)
  for image in $images; do standin "$image"; done
}

# ---- docker compose up, the checks, docker compose down ------------------------------------------------------------
# The user's docker-compose.yml, with only the per-IP rate limit raised for the checks (scripts/containers/compose.test.yml).
export COMPOSE_FILE=docker-compose.yml:scripts/containers/compose.test.yml
compose() { docker compose -p "$PROJECT" "$@"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
compose_down() { compose down -v --remove-orphans >/dev/null 2>&1 || true; }

run_compose() {
  GATEWAY_PORT=$(free_port)
  export GATEWAY_PORT
  compose_down
  say "docker compose up --build --wait (published on 127.0.0.1:$GATEWAY_PORT)"
  local t0=$SECONDS
  if ! timeout 900 docker compose -p "$PROJECT" up --build --wait --quiet-pull; then
    compose logs --tail=50 >&2 || true
    compose_down
    die "docker compose up --build --wait failed"
  fi
  say "up and healthy in $((SECONDS - t0)) s; image $(docker image inspect -f '{{.Size}}' "$PROJECT-gateway" |
    awk '{ printf "%.0f MB", $1 / 1e6 }')"
  if ! COMPOSE_PROJECT=$PROJECT node "$HERE/check.mjs"; then
    compose logs --tail=80 >&2 || true
    compose_down
    die "the compose checks failed"
  fi
  say "docker compose down"
  compose down -v --remove-orphans
  [ -z "$(compose ps -aq)" ] || die "containers left after docker compose down"
  run_managed
}

# ---- the image against a "managed" Redis: TLS with a private CA, credentials from a file, the admin port apart --------
# As docs/operations.md "Running the image" shows it; the Redis is the stand-in with TLS on and a password.
run_managed() {
  local image=$PROJECT-gateway net=$PROJECT-managed dir port admin
  dir=$(mktemp -d)
  chmod 0755 "$dir" # the containers' users (redis, node) read the files in it
  say "the image against a TLS Redis with a password, settings from a mounted file, the admin port apart"
  (
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key -out ca.pem
    openssl req -newkey rsa:2048 -nodes -subj /CN=managed-redis -keyout redis.key -out redis.csr
    echo subjectAltName=DNS:managed-redis >ext
    openssl x509 -req -in redis.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -extfile ext -out redis.pem
    mkdir secrets && cp ca.pem secrets/redis-ca.pem
    printf 'SVC_REDIS_URL: rediss://default:managed-pass@managed-redis:6380\nSVC_PROTECTED_MODE: false\n' >secrets/gateway.yaml
    chmod 0644 ./*.pem ./*.key secrets/*
  ) >/dev/null 2>&1 || die "openssl could not make the test certificates"
  port=$(free_port)
  admin=$(free_port)
  docker network create "$net" >/dev/null
  docker run -d --name "$net-redis" --network "$net" --network-alias managed-redis -v "$dir:/tls:ro" redis:7-alpine \
    redis-server --port 0 --tls-port 6380 --tls-cert-file /tls/redis.pem --tls-key-file /tls/redis.key \
    --tls-ca-cert-file /tls/ca.pem --tls-auth-clients no --requirepass managed-pass >/dev/null
  docker run -d --name "$net-gateway" --network "$net" -p "127.0.0.1:$port:8080" -p "127.0.0.1:$admin:9090" \
    --stop-timeout 15 -e SVC_CONFIG_FILE=/run/secrets/gateway.yaml -e SVC_ADMIN_PORT=9090 \
    -e NODE_EXTRA_CA_CERTS=/run/secrets/redis-ca.pem -v "$dir/secrets:/run/secrets:ro" "$image" >/dev/null
  local ok=no health
  for _ in $(seq 1 120); do
    health=$(docker inspect -f '{{.State.Health.Status}}' "$net-gateway")
    if [ "$health" = healthy ]; then ok=yes; break; fi
    sleep 0.5
  done
  if [ $ok = yes ] &&
    curl -sf -XPOST "127.0.0.1:$port/store/string/managed" -H 'content-type: application/json' -d '{"value":"tls"}' >/dev/null &&
    curl -sf "127.0.0.1:$port/store/string/managed" | grep -q '"value":"tls"' &&
    curl -sf "127.0.0.1:$admin/store/admin/health" | grep -q '"status":"connected"' &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$port/store/admin/health")" = 404 ] &&
    docker logs "$net-gateway" 2>&1 | grep -q 'rediss://default:\*\*\*@managed-redis' &&
    ! docker logs "$net-gateway" 2>&1 | grep -q managed-pass &&
    docker stop "$net-gateway" >/dev/null && [ "$(docker inspect -f '{{.State.ExitCode}}' "$net-gateway")" = 0 ]; then
    say "managed Redis: healthy by its healthcheck on the admin port, a write and a read over TLS, the password only" \
      "in the mounted file (logged masked), admin endpoints on their own port only, docker stop exits 0"
  else
    docker logs "$net-gateway" 2>&1 | tail -n 20 >&2
    ok=no
  fi
  docker rm -f "$net-gateway" "$net-redis" >/dev/null 2>&1 || true
  docker network rm "$net" >/dev/null 2>&1 || true
  rm -rf "$dir"
  [ $ok = yes ] || die "the image against a managed Redis failed"
}

# ---- the suite's subset on a testcontainers Redis ------------------------------------------------------------------
run_testcontainers() {
  # A PATH without redis-server, so that the harness takes its testcontainers branch; node stays reachable (on Debian
  # it sits beside redis-server in /usr/bin), through a directory of its own.
  local path="" dir bin
  bin=$(mktemp -d)
  ln -s "$(command -v node)" "$bin/node"
  IFS=: read -ra dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do [ -x "$dir/redis-server" ] || path="$path:$dir"; done
  say "jest on a testcontainers Redis (no REDIS_URL, no redis-server on the PATH): ${TC_TESTS[*]}"
  local rc=0
  env -u REDIS_URL PATH="$bin$path" TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
    node node_modules/jest/bin/jest.js --ci "${TC_TESTS[@]}" || rc=$?
  rm -rf "$bin"
  # The reaper is off: the harness stops its container; anything a crashed run left is removed by label.
  local left
  left=$(docker ps -aq --filter label=org.testcontainers=true)
  if [ -n "$left" ]; then docker rm -f $left >/dev/null; fi
  [ "$rc" -eq 0 ] || die "the suite's subset failed on the testcontainers Redis"
}

main() {
  trap stop_engine EXIT
  ensure_engine
  ensure_plugins
  standins
  [ -n "${CONTAINERS_SKIP_COMPOSE:-}" ] || run_compose
  [ -n "${CONTAINERS_SKIP_TESTCONTAINERS:-}" ] || run_testcontainers
  say "containers: all checks passed"
}

main "$@"
