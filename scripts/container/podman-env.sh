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
