# Sourced by the container scripts: podman's settings for this kind of machine (../shared/MACHINE.md), and the names
# of the local images. The sandbox refuses podman's default rlimits and crun's cgroup setup: a containers.conf of
# our own sets lower limits and runc.
conf_dir="${XDG_RUNTIME_DIR:-/tmp}/outbound-call-trigger-podman"
mkdir -p "$conf_dir"
cat >"$conf_dir/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$conf_dir/containers.conf"
export NODE_IMAGE="${NODE_IMAGE:-localhost/node:24-bookworm-slim}"
export APP_IMAGE="${APP_IMAGE:-localhost/outbound-call-trigger:ci}"
export POSTGRES_IMAGE="${POSTGRES_IMAGE:-localhost/postgres:15-debian}"
export REDIS_IMAGE="${REDIS_IMAGE:-localhost/redis:7-debian}"

# A free TCP port below the kernel's ephemeral range (32768-60999 here), so that no process binding port 0 meanwhile
# (tests on the same machine) is handed the port between this check and the container's bind.
free_port() {
  node -e "
    const net = require('node:net');
    const tryPort = () => {
      const port = 20000 + Math.floor(Math.random() * 12000);
      const s = net.createServer().once('error', tryPort).listen(port, '0.0.0.0', () => s.close(() => console.log(port)));
    };
    tryPort();"
}
# Reads JSON on stdin and prints one field of it (a JavaScript accessor such as .call.status).
json_field() { node -e "let t = ''; process.stdin.on('data', (d) => (t += d)).on('end', () => console.log(JSON.parse(t)$1))"; }
# Runs a podman command without its complaints about systemd timers for HEALTHCHECKs, which it cannot schedule here.
quiet() { "$@" 2> >(grep -v 'systemd' >&2); }

# The operator's first hour in a running container `$1`: an agency, its agent and key made with callctl inside it,
# a call triggered at the API base URL `$2` (curl's further options after it), and the wait for that call to
# complete. Prints the call's id; fails with the call's last status when it does not complete within a minute.
first_call() {
  local ctr=$1 base=$2
  shift 2
  local agency agent key call status=""
  agency=$(quiet podman exec "$ctr" callctl agency create --name "Container CI" --json | json_field .id)
  agent=$(quiet podman exec "$ctr" callctl agent create --account "$agency" --name Ada --phone +14155550100 --json |
    json_field .id)
  quiet podman exec "$ctr" callctl agent set-default "$agency" "$agent" --json >/dev/null
  key=$(quiet podman exec "$ctr" callctl key generate "$agency" --json | json_field .key)
  call=$(curl -fsS "$base/api/v1/calls/trigger" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -d '{"phone_number":"+14155552671","name":"Ada"}' "$@" | json_field .call_id)
  for _ in $(seq 1 60); do
    status=$(quiet podman exec "$ctr" callctl calls show "$call" --json | json_field .call.status)
    [ "$status" = completed ] && break
    sleep 1
  done
  [ "$status" = completed ] || { echo "$ctr: call $call is $status" >&2; return 1; }
  echo "$call"
}
