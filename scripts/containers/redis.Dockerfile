# Stand-in for the official redis image (no registry is reachable in CI): Debian's redis-server on a Debian base, with
# what the official image gives and docker-compose.yml and the tests rely on: redis-server and redis-cli on the PATH,
# /data as the working directory owned by the `redis` user, and protected mode off (see redis-entrypoint.sh).
# Built by scripts/test-containers.sh; apt reaches the mirror the base image was bootstrapped from.
ARG BASE
FROM ${BASE}
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /data
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
