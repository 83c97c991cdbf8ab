#!/usr/bin/env bash
# A node for the kubelet tier: one network namespace holding three real kube-apiservers (one etcd,
# lease endpoint reconciler), containerd, a container registry on the node's loopback
# (127.0.0.1:5000, Debian's docker-registry, which .ci/run installs) and a real kubelet v1.20 whose
# kubeconfig points at https://127.0.0.1:6443, which only kubeward proxy (a static pod) serves.
# Uses ../shared/kubelet/ (build.sh must have run; runtime.sh installs the container tools).
#   node-env.sh start   prints KEY=value lines (also in $STATE/env) for the tests
#   node-env.sh stop    stops the kubelet, its pods, containerd, the apiservers; deletes the netns
# Env: KW_NODE_STATE (default /tmp/kw-node), KW_NODE_NETNS (default kwk-<pid>), KUBEWARD_SHARED_DIR.
# The image gets to containerd as to any node: pushed to the registry (npm run image -- --push
# 127.0.0.1:5000, inside the namespace), pulled by the kubelet when a pod names it.
set -euo pipefail
STATE="${KW_NODE_STATE:-/tmp/kw-node}"
SHARED="${KUBEWARD_SHARED_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}"
KL="$SHARED/kubelet"
ADDRS="198.51.100.2 198.51.100.3 198.51.100.4"
NODE_IP=198.51.100.10

stop() {
  [ -f "$STATE/env" ] || return 0
  # shellcheck disable=SC1091
  . "$STATE/env"
  KUBELET_STATE="$STATE/kubelet" bash "$KL/kubelet.sh" stop >/dev/null 2>&1 || true
  KUBELET_RT_STATE="$STATE/runtime" bash "$KL/runtime.sh" stop >/dev/null 2>&1 || true
  NETNS="$NETNS" STATE="$STATE/multi" PKI_FROM="$STATE/pki" bash "$KL/multi-apiserver.sh" stop >/dev/null 2>&1 || true
  if [ -f "$STATE/registry/pid" ]; then
    p=$(cat "$STATE/registry/pid"); kill "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true; rm -rf "$STATE/registry"
  fi
  rm -f "$STATE/env"
  rm -rf "$STATE/multi/etcd"   # the logs stay for a look after a failure
}
[ "${1:-}" = stop ] && { stop; exit 0; }
[ "${1:-}" = start ] || { echo "usage: node-env.sh start|stop" >&2; exit 2; }
stop
NETNS="${KW_NODE_NETNS:-kwk-$$}"
mkdir -p "$STATE/pki" "$STATE/logs"
t0=$(date +%s.%N)
since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }'; }

# The CA, service-account keys and an admin token (system:masters) for multi-apiserver.sh.
P="$STATE/pki"
if [ ! -f "$P/admin.token" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 30 -subj /CN=kw-node-ca 2>/dev/null
  openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
  openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
  openssl rand -hex 24 > "$P/admin.token"
  echo "$(cat "$P/admin.token"),kw-admin,kw-admin-uid,\"system:masters\"" > "$P/tokens.csv"
  chmod 600 "$P"/*.key "$P/admin.token" "$P/tokens.csv"
fi
printf 'NETNS=%s\n' "$NETNS" > "$STATE/env"

NETNS="$NETNS" ADDRS="$ADDRS" STATE="$STATE/multi" PKI_FROM="$P" bash "$KL/multi-apiserver.sh" start > "$STATE/logs/multi.out" 2>&1 \
  || { tail -20 "$STATE/logs/multi.out" >&2; exit 1; }
ip -n "$NETNS" addr add "$NODE_IP/32" dev lo
# Connections queued on a closing SO_REUSEPORT listener move to its peer instead of being reset.
ip netns exec "$NETNS" sysctl -qw net.ipv4.tcp_migrate_req=1 2>/dev/null || true
echo "node-env: apiservers up after $(since)" >&2

if ctr version >/dev/null 2>&1; then echo "node-env: a containerd is already running; stop it first (it must run in the node's namespace)" >&2; exit 1; fi
NETNS="$NETNS" KUBELET_RT_STATE="$STATE/runtime" bash "$KL/runtime.sh" start > "$STATE/logs/runtime.out" 2>&1 \
  || { tail -20 "$STATE/logs/runtime.out" >&2; exit 1; }
echo "node-env: containerd up after $(since)" >&2
# The registry: plain HTTP on the namespace's loopback (containerd speaks HTTP to a loopback
# registry), its storage under $STATE, run as nobody; stopped by its PID.
command -v docker-registry >/dev/null || { echo "node-env: no docker-registry; install Debian's docker-registry (bash .ci/run does)" >&2; exit 1; }
REG="$STATE/registry"
mkdir -p "$REG/data"
cat > "$REG/config.yml" <<YML
version: 0.1
log: { level: warn, fields: { service: registry } }
storage: { filesystem: { rootdirectory: $REG/data }, delete: { enabled: true } }
http: { addr: "127.0.0.1:5000" }
YML
chown -R 65534:65534 "$REG/data"
ip netns exec "$NETNS" setpriv --reuid=65534 --regid=65534 --clear-groups docker-registry serve "$REG/config.yml" > "$STATE/logs/registry.log" 2>&1 &
echo $! > "$REG/pid"
for _ in $(seq 100); do
  ip netns exec "$NETNS" curl -fsS --max-time 1 http://127.0.0.1:5000/v2/ >/dev/null 2>&1 && break
  kill -0 "$(cat "$REG/pid")" 2>/dev/null || { tail -5 "$STATE/logs/registry.log" >&2; exit 1; }
  sleep 0.1
done
ip netns exec "$NETNS" curl -fsS --max-time 1 http://127.0.0.1:5000/v2/ >/dev/null || { echo "node-env: the registry did not answer on 127.0.0.1:5000" >&2; exit 1; }
echo "node-env: registry up after $(since)" >&2
mkdir -p "$STATE/kubelet/manifests"
cat >> "$STATE/env" <<ENV
STATE=$STATE
ADDRS="$ADDRS"
NODE_IP=$NODE_IP
CA=$P/ca.crt
TOKEN=$P/admin.token
KUBECONFIG=$STATE/multi/kubeconfig
MANIFESTS=$STATE/kubelet/manifests
KUBELET_STATE=$STATE/kubelet
REGISTRY=127.0.0.1:5000
ENV
cat "$STATE/env"
