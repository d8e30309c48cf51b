#!/usr/bin/env bash
# qbss-lab.sh SCENARIO OUTDIR [--scale F]
#
# Runs a qbss-model scenario as real traffic through qbss-router:
#
#   sender ns --[TUN qL]--> qbss-router (router ns) --[TUN qR]--> receiver ns
#
# SCENARIO is a scenario file or a preset name. The router creates both TUN devices
# in its namespace; this script moves qL into the sender's namespace and qR into the
# receiver's (a TUN device keeps its file descriptor across namespaces), gives them
# 198.18.0.1 and 198.18.0.2 and routes each to the other through its device. The
# streams run as real sockets (examples/lab/qbss-traffic.py): UDP at the scenario's
# rate and marking, TCP as Linux connections with the stream's congestion control;
# the router holds each TCP stream's ACKs for its RTT, so no delay hop is needed.
#
# Writes to OUTDIR: scenario.toml, model.json (qbss-model --json --scale F),
# router.json and router.txt (qbss-router --stats-json and its per-second lines),
# recv.json, send.json, and measured.json: qbss-model --json's shape plus "scale",
# with bits and packets measured at the receiver and drops counted by the router.
#
# --scale F divides every rate (link, VC, streams) so the run fits a small machine;
# times, sizes and queue limits stay. Binaries: $QBSS_MODEL and $QBSS_ROUTER, else
# qbss-model / qbss-router on PATH. Needs root, ip, python3 and TUN support.
# Namespaces are named qbss<pid><random>{s,r,d} and are deleted on exit.
set -euo pipefail

usage() { echo "usage: $0 SCENARIO OUTDIR [--scale F] | $0 --check" >&2; exit 2; }
if [ "${1:-}" = --check ]; then
  # Can the lab run here? Exit 0, or 1 with the reason on stderr.
  [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
  for t in ip python3; do
    command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }
  done
  [ -c /dev/net/tun ] || { echo "needs /dev/net/tun" >&2; exit 1; }
  ns="qbsscheck$$$RANDOM"
  ip netns add "$ns" 2>/dev/null || { echo "cannot create network namespaces" >&2; exit 1; }
  ip netns del "$ns"
  exit 0
fi
[ $# -ge 2 ] || usage
scenario=$1 outdir=$2; shift 2
scale=1
while [ $# -gt 0 ]; do
  case $1 in
    --scale) [ $# -ge 2 ] || usage; scale=$2; shift 2 ;;
    *) usage ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
model=${QBSS_MODEL:-qbss-model}
router=${QBSS_ROUTER:-qbss-router}
port_base=5201
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

if [ -f "$scenario" ]; then
  cp "$scenario" "$outdir/scenario.toml"
else
  "$model" --preset "$scenario" --show > "$outdir/scenario.toml"
fi
"$model" "$outdir/scenario.toml" --json --scale "$scale" > "$outdir/model.json" 2> "$outdir/model.txt"

id="qbss$$$RANDOM"
S=${id}s R=${id}r D=${id}d
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "$S" "$R" "$D"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
for ns in "$S" "$R" "$D"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
for ns in "$S" "$D"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

# Second 0 of the scenario: far enough ahead for the set-up below.
epoch=$(python3 -c 'import time; print(f"{time.time() + 3:.6f}")')
ip netns exec "$R" "$router" --scenario "$outdir/scenario.toml" --left qL --right qR \
  --scale "$scale" --epoch "$epoch" --port-base "$port_base" \
  --stats-json "$outdir/router.json" > "$outdir/router.txt" 2>&1 &
router_pid=$!
pids+=("$router_pid")
for _ in $(seq 100); do
  ip -n "$R" link show qR >/dev/null 2>&1 && ip -n "$R" link show qL >/dev/null 2>&1 && break
  kill -0 "$router_pid" 2>/dev/null || { cat "$outdir/router.txt" >&2; exit 1; }
  sleep 0.05
done
ip -n "$R" link set qL netns "$S"
ip -n "$R" link set qR netns "$D"
ip -n "$S" addr add 198.18.0.1/32 dev qL
ip -n "$S" link set qL up
ip -n "$S" route add 198.18.0.2/32 dev qL
ip -n "$D" addr add 198.18.0.2/32 dev qR
ip -n "$D" link set qR up
ip -n "$D" route add 198.18.0.1/32 dev qR

ip netns exec "$D" python3 "$here/qbss-traffic.py" recv "$outdir/model.json" "$epoch" \
  198.18.0.2 "$port_base" "$outdir/recv.json" &
recv_pid=$!
pids+=("$recv_pid")
sleep 0.3
ip netns exec "$S" python3 "$here/qbss-traffic.py" send "$outdir/model.json" "$epoch" \
  198.18.0.2 "$port_base" "$outdir/send.json" &
send_pid=$!
pids+=("$send_pid")

wait "$send_pid"
wait "$recv_pid"
wait "$router_pid"
pids=()
python3 "$here/qbss-traffic.py" merge "$outdir/model.json" "$outdir/recv.json" \
  "$outdir/send.json" "$outdir/router.json" "$scale" "$outdir/measured.json"
echo "qbss-lab: $outdir/measured.json"
