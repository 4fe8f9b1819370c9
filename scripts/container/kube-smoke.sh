#!/usr/bin/env bash
# Runs deploy/kubernetes/outbound-call-trigger.yaml with `podman kube play`, as far as podman allows: one pod (podman
# plays a Deployment's template once, whatever its replicas), on the host's network (no cluster DNS or Service here),
# against the machine's PostgreSQL and Redis (the Secret's values given inline), under the manifest's own
# securityContext (a user id the image does not know, group 0). Checks that it becomes ready, serves a trigger made
# with a key from callctl, completes the call, and that `podman kube down` stops it. Podman ignores probes and
# terminationGracePeriodSeconds: readiness is polled here; the grace period is not tested (docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/container/podman-env.sh
podman image exists "$APP_IMAGE" || bash scripts/container/smoke.sh


db="oct_kube_$$"
work=$(mktemp -d)
manifest="$work/play.yaml"
cleanup() {
  podman kube down "$manifest" >/dev/null 2>&1 || true
  podman volume rm -f data >/dev/null 2>&1 || true
  psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db"

# The manifest as committed, with three changes podman needs: the local image; the Secret's values inline (podman
# 4.3 reads a secretRef from a podman secret in a format of its own, which this test would then be testing instead);
# and, on the host's network (no cluster network here), no container port list (podman would map those ports) and
# probes naming ports by number.
write_manifest() {
  node -e '
    const fs = require("node:fs");
    const [file, image, db, port, internal, secretsKey] = process.argv.slice(1);
    const env = { DATABASE_URL: `postgresql://postgres@127.0.0.1:5432/${db}`, REDIS_URL: "redis://127.0.0.1:6379",
      SECRETS_KEY: secretsKey, PORT: port, INTERNAL_PORT: internal };
    const inline = Object.entries(env).map(([k, v]) => `            - name: ${k}\n              value: "${v}"\n`).join("");
    let text = fs.readFileSync(file, "utf8").replace("image: outbound-call-trigger:latest", `image: ${image}`);
    text = text.replace(/          envFrom:\n            - secretRef:\n                name: outbound-call-trigger\n/, "");
    text = text.replace("          env:\n", `          env:\n${inline}`);
    text = text.replace(/          ports:\n(?:            .*\n|              .*\n)*?(?=          env:)/, "");
    text = text.replace(/port: internal/g, `port: ${internal}`);
    if (text.includes("secretRef") || text.includes("containerPort")) throw new Error("the manifest changed shape");
    process.stdout.write(text);
  ' deploy/kubernetes/outbound-call-trigger.yaml "$APP_IMAGE" "$db" "$port" "$internal" "$secrets_key" >"$manifest"
}
# The Secret's SECRETS_KEY: one for every play of this run (a retried play reads what the first one sealed).
secrets_key=$(head -c 32 /dev/urandom | base64)

# Ready: the health endpoint answers and the container has not been restarted (on the host's network another
# process on the machine may take a port between the choice and the bind: the server then exits, podman restarts it,
# and that play is retried with other ports).
pod_ctr=outbound-call-trigger-pod-0-server
# kube down may leave the pod behind (its emptyDir volume busy while the last container goes), and a run stopped
# midway leaves it too: a play would then refuse the pod's name, so the pod and the volume are removed outright.
tear_down() {
  podman kube down "$manifest" >/dev/null 2>&1 || true
  podman pod rm -f -t 0 outbound-call-trigger-pod-0 >/dev/null 2>&1 || true
  podman volume rm -f data >/dev/null 2>&1 || true
}
played=""
for attempt in 1 2 3; do
  tear_down
  port=$(free_port)
  internal=$(free_port)
  write_manifest
  quiet podman kube play --replace --network host "$manifest" >/dev/null
  for _ in $(seq 1 90); do
    if curl -fsS "http://127.0.0.1:$internal/health/ready" >/dev/null 2>&1; then
      sleep 2
      [ "$(podman inspect --format '{{.RestartCount}} {{.State.Running}}' "$pod_ctr")" = "0 true" ] && played=1
      break
    fi
    sleep 1
  done
  [ -n "$played" ] && break
  echo "kube: attempt $attempt did not become ready on ports $port and $internal; again with others" >&2
  podman logs "$pod_ctr" 2>&1 | grep -v '^    at ' | tail -5 >&2
  tear_down
done
[ -n "$played" ] || { echo "kube: never ready" >&2; exit 1; }
uid=$(quiet podman exec "$pod_ctr" id -u || true)
[ "$uid" = 10001 ] || { echo "kube: runs as $uid, not the manifest's 10001" >&2; exit 1; }

# TLS_MODE=proxy: plain HTTP, as the ingress forwards it.
call=$(first_call "$pod_ctr" "http://127.0.0.1:$port" -H 'X-Forwarded-Proto: https')
# podman may fail to remove the emptyDir's volume while the pod's last container goes: the pod is what must go.
quiet podman kube down "$manifest" >/dev/null 2>&1 || true
! podman pod exists outbound-call-trigger-pod-0 || { echo "kube: the pod is still there after kube down" >&2; exit 1; }
podman volume rm -f data >/dev/null 2>&1 || true
echo "kube: pod ready as uid 10001 (group 0), call $call completed, pod taken down"
