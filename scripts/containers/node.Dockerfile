# Stand-in for the official node image (no registry is reachable in CI): the machine's Node on a Debian base, with
# what the official image gives and the project's Dockerfile relies on: node/npm/npx in /usr/local/bin and the
# `node` user (uid/gid 1000, home /home/node). Built by scripts/test-containers.sh from its own context.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
# npm inside a build trusts the CA bundle the script put beside it (the machine's): npm reads this file, node does not,
# so the service run from the image never sees it. It exists only in this local stand-in, never in the project.
COPY npmrc /usr/local/etc/npmrc
COPY ca.crt /usr/local/etc/npm-ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
  && groupadd --gid 1000 node \
  && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && node --version && npm --version
CMD ["node"]
