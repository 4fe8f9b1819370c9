#!/usr/bin/env bash
# Runs deploy/compose.yaml with podman-compose as far as this machine allows (no registry: the app image from
# smoke.sh, PostgreSQL and Redis from service-images.sh): both replicas become healthy, an agency made with callctl
# in replica 1 triggers a call through replica 2, the call completes (dispatched by whichever replica leads), and
# both replicas stop with exit code 0 after draining (`stop -t 20`: podman-compose ignores stop_grace_period).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/container/podman-env.sh
bash scripts/container/service-images.sh >/dev/null
podman image exists "$APP_IMAGE" || bash scripts/container/smoke.sh


project="octcompose$$"
# The replicas' shared secrets key (deploy/compose.yaml requires one): a fresh one per run.
SECRETS_KEY=$(head -c 32 /dev/urandom | base64)
export APP_IMAGE POSTGRES_IMAGE REDIS_IMAGE SECRETS_KEY
APP_1_PORT=$(free_port)
APP_2_PORT=$(free_port)
export APP_1_PORT APP_2_PORT
compose() { podman-compose -p "$project" -f deploy/compose.yaml "$@" >/dev/null 2>&1; }
trap 'compose down -v -t 5 || true' EXIT
compose up -d --no-build

for replica in 1 2; do
  healthy=""
  for _ in $(seq 1 120); do
    if quiet podman healthcheck run "${project}_app-${replica}_1" >/dev/null 2>&1; then healthy=1 && break; fi
    sleep 1
  done
  [ -n "$healthy" ] || { podman logs "${project}_app-${replica}_1" | tail -30 >&2; echo "replica $replica never healthy" >&2; exit 1; }
done

one="${project}_app-1_1"
call=$(first_call "$one" "https://127.0.0.1:$APP_2_PORT" -k)

for replica in 1 2; do
  quiet podman stop -t 20 "${project}_app-${replica}_1" >/dev/null
  code=$(podman inspect --format '{{.State.ExitCode}}' "${project}_app-${replica}_1")
  [ "$code" = 0 ] || { echo "replica $replica exited $code" >&2; exit 1; }
done
echo "compose: two replicas healthy, call $call triggered through replica 2 completed, both stopped with exit code 0"
