#!/usr/bin/env bash
# Fetches the Redis-compatible servers the engine tests run on (Redis 8.0, Valkey 8.0, Valkey 9.1) into .engines/,
# without changing system packages; prints one `name=wrapper` line per engine. Idempotent: a fetched engine is kept.
#
#   scripts/engines.sh                 # every engine
#   scripts/engines.sh valkey-9.1      # one
#
# Each engine is Debian's `*-tools` package (its server binary is `*-check-rdb`; `*-server` is a link to it) and
# the libraries it links to, from the suite that builds it, fetched with `apt-get download` through a private apt
# state (its own sources list naming only that suite, on the mirror /etc/apt/sources* already uses), unpacked
# with `dpkg-deb -x` into .engines/<name>/root. Builds of Debian 13 and testing need a newer glibc than the
# system's: .engines/<name>/server runs the binary through that folder's own loader and libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD/.engines"

# name suite package: the suites are Debian 13 (trixie), bookworm-backports and testing (forky).
ENGINES=(
  "redis-8.0 trixie redis-tools"
  "valkey-8.0 bookworm-backports valkey-tools"
  "valkey-9.1 forky valkey-tools"
)
# What the servers link to (ldd), each from the same suite as the server.
LIBS=(libc6 libssl3t64 libstdc++6 libgcc-s1 libjemalloc2 liblzf1 libatomic1 libsystemd0 libcap2 libzstd1 zlib1g)

# The mirror apt already uses: the first Debian archive URI of /etc/apt/sources.list{,.d/*} that is not security's.
mirror() {
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list)
  local uri
  uri=$(cat "${files[@]}" 2>/dev/null |
    sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+.*/\2/p' |
    grep -E '/debian/?$' | grep -v security | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# bookworm's libraries are the system's: bookworm-backports builds need only the server package itself.
libs_for() { [ "$1" = bookworm-backports ] && echo "" || echo "${LIBS[*]}"; }

fetch() {
  local name=$1 suite=$2 package=$3
  local dir="$ROOT/$name" apt="$ROOT/apt/$suite"
  if [ -x "$dir/server" ] && "$dir/server" --version >/dev/null 2>&1; then
    echo "$name=$dir/server"
    return
  fi
  rm -rf "$dir"
  mkdir -p "$dir/debs" "$dir/root" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/sources.list.d" \
    "$apt/etc/preferences.d" "$apt/etc/apt.conf.d"
  : >"$apt/status"
  local line="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror)"
  echo "$line $suite main" >"$apt/etc/sources.list"
  local opts=(
    -o "Dir::Etc=$apt/etc" -o "Dir::Etc::sourcelist=$apt/etc/sources.list" -o "Dir::Etc::sourceparts=$apt/etc/sources.list.d"
    -o "Dir::Etc::preferencesparts=$apt/etc/preferences.d" -o "Dir::Etc::parts=$apt/etc/apt.conf.d"
    -o "Dir::State=$apt" -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status" -o "Dir::Cache=$apt/cache"
    -o "APT::Default-Release=$suite" -o APT::Sandbox::User=root -o Debug::NoLocking=1 -qq
  )
  # One update per suite and day at most.
  if [ -z "$(find "$apt/lists" -maxdepth 1 -name '*_InRelease' -mtime -1 2>/dev/null)" ]; then
    apt-get "${opts[@]}" update >&2
  fi
  local wanted=("$package/$suite")
  for lib in $(libs_for "$suite"); do wanted+=("$lib/$suite"); done
  (cd "$dir/debs" && apt-get "${opts[@]}" download "${wanted[@]}" >&2)
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  local binary
  binary=$(ls "$dir"/root/usr/bin/*-check-rdb | head -n1)
  # The binary runs as a server when its name ends in -server (the link the *-server package would install).
  ln -sf "$(basename "$binary")" "${binary%-check-rdb}-server"
  if [ "$suite" = bookworm-backports ]; then
    printf '#!/bin/sh\nexec "%s" "$@"\n' "${binary%-check-rdb}-server" >"$dir/server"
  else
    local libdirs="$dir/root/usr/lib/x86_64-linux-gnu:$dir/root/lib/x86_64-linux-gnu"
    printf '#!/bin/sh\nexec "%s/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "%s" --argv0 "%s" "%s" "$@"\n' \
      "$dir" "$libdirs" "${binary%-check-rdb}-server" "$binary" >"$dir/server"
  fi
  chmod +x "$dir/server"
  "$dir/server" --version >&2
  echo "$name=$dir/server"
}

want=("$@")
for engine in "${ENGINES[@]}"; do
  read -r name suite package <<<"$engine"
  if [ ${#want[@]} -eq 0 ] || [[ " ${want[*]} " == *" $name "* ]]; then fetch "$name" "$suite" "$package"; fi
done
