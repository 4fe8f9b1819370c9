#!/usr/bin/env bash
# Builds, once, stand-ins for the official postgres and redis images that deploy/compose.yaml and the Kubernetes
# manifests name, for smoke tests on a machine with no container registry: Debian's own PostgreSQL 15 and Redis 7
# on the local Debian base, with the part of the official postgres image's interface the manifests use
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, data in /var/lib/postgresql/data, listening on every address).
set -euo pipefail
source "$(dirname "$0")/podman-env.sh"
bash "$(dirname "$0")/base-images.sh" >/dev/null

if ! podman image exists "$POSTGRES_IMAGE"; then
  ctx=$(mktemp -d)
  cat >"$ctx/entrypoint.sh" <<'ENTRY'
#!/bin/sh
# The official image's first start, in short: a cluster with a password-protected superuser and a database.
set -e
export PGDATA=/var/lib/postgresql/data
bin=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
  printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >/tmp/pw
  chown postgres /tmp/pw
  su postgres -c "$bin/initdb -D $PGDATA -U ${POSTGRES_USER:-postgres} --pwfile=/tmp/pw --auth=scram-sha-256" >/dev/null
  rm /tmp/pw
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  su postgres -c "$bin/pg_ctl -D $PGDATA -o '-c listen_addresses=' -w start" >/dev/null
  [ -z "$POSTGRES_DB" ] || [ "$POSTGRES_DB" = postgres ] ||
    su postgres -c "PGPASSWORD='$POSTGRES_PASSWORD' $bin/psql -h /var/run/postgresql -U ${POSTGRES_USER:-postgres} -d postgres -qc 'CREATE DATABASE \"$POSTGRES_DB\"'"
  su postgres -c "$bin/pg_ctl -D $PGDATA -w stop" >/dev/null
fi
exec su postgres -c "exec $bin/postgres -D $PGDATA -c listen_addresses=*"
ENTRY
  cat >"$ctx/Containerfile" <<'CONTAINERFILE'
FROM localhost/debian:bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH
COPY entrypoint.sh /usr/local/bin/entrypoint.sh
RUN chmod 0755 /usr/local/bin/entrypoint.sh
EXPOSE 5432
CMD ["/usr/local/bin/entrypoint.sh"]
CONTAINERFILE
  podman build --quiet --network host -t "$POSTGRES_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
fi

if ! podman image exists "$REDIS_IMAGE"; then
  ctx=$(mktemp -d)
  cat >"$ctx/Containerfile" <<'CONTAINERFILE'
FROM localhost/debian:bookworm
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
CONTAINERFILE
  podman build --quiet --network host -t "$REDIS_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
fi
echo "service images: $POSTGRES_IMAGE, $REDIS_IMAGE"
