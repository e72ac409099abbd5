#!/bin/sh
# The stand-in redis image's entrypoint, as the official one behaves: arguments that start with "-" go to
# redis-server; redis-server runs as `redis` with /data its own. The official image builds Redis with protected mode
# off (it is reached from other containers, with no config file); Debian's build keeps it on, so it is turned off
# here, first, so that the command's own --protected-mode still wins.
set -e
case "$1" in -*) set -- redis-server "$@" ;; esac
if [ "$1" = redis-server ]; then
  shift
  # A config file, when given, must stay redis-server's first argument.
  case "${1:-}" in
    '' | -*) set -- redis-server --protected-mode no "$@" ;;
    *) conf=$1; shift; set -- redis-server "$conf" --protected-mode no "$@" ;;
  esac
  if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis /data 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
