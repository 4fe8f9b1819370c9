#!/usr/bin/env bash
# Builds the project's image with podman from the repository's own files and runs it as an operator would
# (issue 49): once against the machine's PostgreSQL and Redis, once with its embedded database on a volume under an
# arbitrary user id in group 0 (OpenShift's way). Each run waits for the image's HEALTHCHECK, creates an agency, its
# agent and key with `callctl` inside the container, triggers a call over HTTPS, waits for it to complete, and stops
# the container with `podman stop -t 20`, expecting exit code 0 after the drain. Exits non-zero on the first failure,
# with the container's log.
#   scripts/container/smoke.sh            build (reusing podman's layer cache and npm's cache mount), then both runs
#   SKIP_BUILD=1 scripts/container/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/container/podman-env.sh


if [ -z "${SKIP_BUILD:-}" ]; then
  bash scripts/container/base-images.sh
  # The build's npm trusts the machine's certificate bundle and uses its registry (a proxy re-signs HTTPS here):
  # both mounted for the RUN steps only, never in a layer, and the registry's host in no committed file.
  buildcfg=$(mktemp -d)
  cp /etc/ssl/certs/ca-certificates.crt "$buildcfg/ca.crt"
  printf 'cafile=/run/buildcfg/ca.crt\nregistry=%s\n' "$(npm config get registry)" >"$buildcfg/npmrc"
  started=$SECONDS
  # --jobs 2: the build stage and the production dependencies' stage are independent, so they run side by side.
  podman build --quiet --jobs 2 --format docker --network host --build-arg "NODE_IMAGE=$NODE_IMAGE" \
    --build-arg NPM_CONFIG_USERCONFIG=/run/buildcfg/npmrc -v "$buildcfg:/run/buildcfg:ro" -t "$APP_IMAGE" . >/dev/null
  rm -rf "$buildcfg"
  echo "image $APP_IMAGE built in $((SECONDS - started)) s"
  [ "$(podman image inspect "$APP_IMAGE" | json_field '[0].Healthcheck?.Test?.length ?? 0')" != 0 ] || {
    echo "the image has no HEALTHCHECK (built without --format docker?)" >&2
    exit 1
  }
fi

containers=()
volumes=()
databases=()
cleanup() {
  for c in "${containers[@]}"; do podman rm -f "$c" >/dev/null 2>&1 || true; done
  for v in "${volumes[@]}"; do podman volume rm -f "$v" >/dev/null 2>&1 || true; done
  for d in "${databases[@]}"; do psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $d WITH (FORCE)" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT


# Runs one container (the arguments after the name go to `podman run`), then the operator's first hour in it.
exercise() {
  local name=$1
  shift
  local port internal
  port=$(free_port)
  internal=$(free_port)
  containers+=("$name")
  quiet podman run -d --name "$name" --network host -e "PORT=$port" -e "INTERNAL_PORT=$internal" \
    -e SIMULATED_RING_MS=200 -e SIMULATED_TALK_MS=500 "$@" "$APP_IMAGE" >/dev/null
  local healthy=""
  for _ in $(seq 1 90); do
    if quiet podman healthcheck run "$name" >/dev/null 2>&1; then healthy=1 && break; fi
    sleep 1
  done
  [ -n "$healthy" ] || { podman logs "$name" | tail -30 >&2; echo "$name: never healthy" >&2; return 1; }

  local call
  call=$(first_call "$name" "https://127.0.0.1:$port" -k) || { podman logs "$name" | tail -30 >&2; return 1; }

  quiet podman stop -t 20 "$name" >/dev/null
  local code
  code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || { podman logs "$name" | tail -30 >&2; echo "$name: exit code $code after stop" >&2; return 1; }
  echo "$name: healthy, agency and key made with callctl, call $call completed, stopped with exit code 0"
}

# 1. Against the machine's PostgreSQL (a database of its own) and Redis.
db="oct_container_$$"
databases+=("$db")
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db"
# SECRETS_KEY as a deployment sharing the database gives every replica (docs/operations.md#secrets).
exercise "oct-ci-services-$$" -e "DATABASE_URL=postgresql://postgres@127.0.0.1:5432/$db" -e REDIS_URL=redis://127.0.0.1:6379 \
  -e "SECRETS_KEY=$(head -c 32 /dev/urandom | base64)"

# 2. The embedded database on a volume, as an arbitrary user id in group 0; --init reaps the database's processes.
volume="oct-ci-data-$$"
volumes+=("$volume")
podman volume create "$volume" >/dev/null
exercise "oct-ci-embedded-$$" --init --user 12345:0 -v "$volume:/app/.data"
