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
# Namespaces are named qbss<pid><random>-{s,r,d} ($LAB_NETNS-{s,r,d} when the lab
# harness gives a prefix) and are deleted on exit.
#
# Timing. The scenario's second 0 (the epoch all clocks count from) is fixed only
# once the receiver and sender processes are running (they wait for it in
# OUTDIR/epoch), ahead by 1.5 s plus twice what the set-up so far took (the
# machine's pace), for the router and its devices; the script fails if the
# receiver's sockets are not bound before it (setup.log says when each step ended).
# The router, the receiver and the sender run at real-time priority (chrt -f 10,
# where allowed): each is a few percent of a core, and a scheduler stall of any of
# them under load would move packets from one second to the next. $LAB_PYTHON is
# the Python interpreter (default python3).
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

id="${LAB_NETNS:-qbss$$$RANDOM}"
S=$id-s R=$id-r D=$id-d
LAB_NAME=qbss-lab
# shellcheck source=lab-lib.sh
. "$here/lab-lib.sh"
# When each step of the set-up ended (Unix time), in setup.log: the epoch
# below must come after all of them.
stamp() { echo "$(date +%s.%N) $*" >> "$outdir/setup.log"; }
: > "$outdir/setup.log"
setup_start=$(date +%s.%N)
new_netns "$S" "$R" "$D"
for ns in "$S" "$D"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

PY="${LAB_PYTHON:-python3}"
RT=()
if command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then RT=(chrt -f 10); fi
rm -f "$outdir/epoch" "$outdir/recv.started" "$outdir/send.started" "$outdir/recv.ready"
# The traffic processes first: they start (imports), then wait for the epoch.
ip netns exec "$D" ${RT[@]+"${RT[@]}"} "$PY" "$here/qbss-traffic.py" recv "$outdir/model.json" \
  "@$outdir/epoch" 198.18.0.2 "$port_base" "$outdir/recv.json" \
  "$outdir/recv.started" "$outdir/recv.ready" 2> "$outdir/recv.err" &
recv_pid=$!
PIDS+=("$recv_pid")
ip netns exec "$S" ${RT[@]+"${RT[@]}"} "$PY" "$here/qbss-traffic.py" send "$outdir/model.json" \
  "@$outdir/epoch" 198.18.0.2 "$port_base" "$outdir/send.json" \
  "$outdir/send.started" 2> "$outdir/send.err" &
send_pid=$!
PIDS+=("$send_pid")
for _ in $(seq 600); do
  [ -e "$outdir/recv.started" ] && [ -e "$outdir/send.started" ] && break
  kill -0 "$recv_pid" 2>/dev/null && kill -0 "$send_pid" 2>/dev/null \
    || { cat "$outdir/recv.err" "$outdir/send.err" >&2; exit 1; }
  sleep 0.05
done
[ -e "$outdir/recv.started" ] && [ -e "$outdir/send.started" ] \
  || { echo "qbss-lab: the traffic processes did not start in 30 s" >&2; exit 1; }
stamp "traffic processes started"

# Second 0 of the scenario: far enough ahead for the router and its devices.
# What is left of the set-up is of the same kind as what is done (starting
# processes, ip commands), so the time that took measures the machine: 1.5 s
# plus twice that (0.2 to 0.5 s idle; seconds on a loaded machine), at most 15 s.
epoch=$(awk -v s="$setup_start" -v now="$(date +%s.%N)" \
  'BEGIN { lead = 1.5 + 2 * (now - s); if (lead > 15) lead = 15; printf "%.6f", now + lead }')
stamp "epoch $epoch"
ip netns exec "$R" ${RT[@]+"${RT[@]}"} "$router" --scenario "$outdir/scenario.toml" --left qL --right qR \
  --scale "$scale" --epoch "$epoch" --port-base "$port_base" \
  --stats-json "$outdir/router.json" > "$outdir/router.txt" 2>&1 &
router_pid=$!
PIDS+=("$router_pid")
for _ in $(seq 250); do
  ip -n "$R" link show qR >/dev/null 2>&1 && ip -n "$R" link show qL >/dev/null 2>&1 && break
  kill -0 "$router_pid" 2>/dev/null || { cat "$outdir/router.txt" >&2; exit 1; }
  sleep 0.02
done
stamp "router devices open"
# One ip process per namespace (-batch), not one per command.
printf 'link set qL netns %s\nlink set qR netns %s\n' "$S" "$D" | ip -n "$R" -batch -
printf 'addr add 198.18.0.1/32 dev qL\nlink set qL up\nroute add 198.18.0.2/32 dev qL\n' \
  | ip -n "$S" -batch -
printf 'addr add 198.18.0.2/32 dev qR\nlink set qR up\nroute add 198.18.0.1/32 dev qR\n' \
  | ip -n "$D" -batch -
stamp "devices moved"
echo "$epoch" > "$outdir/epoch.tmp" && mv "$outdir/epoch.tmp" "$outdir/epoch"
for _ in $(seq 500); do
  [ -e "$outdir/recv.ready" ] && break
  kill -0 "$recv_pid" 2>/dev/null || { cat "$outdir/recv.err" >&2; exit 1; }
  sleep 0.02
done
stamp "receiver bound"
awk -v e="$epoch" -v now="$(date +%s.%N)" 'BEGIN { exit !(now < e) }' \
  || { echo "qbss-lab: the set-up overran second 0 (the machine is too slow or too loaded for it):" >&2
       cat "$outdir/setup.log" >&2; exit 1; }

wait "$send_pid" || { echo "qbss-lab: the sender failed:" >&2; cat "$outdir/send.err" >&2; exit 1; }
wait "$recv_pid" || { echo "qbss-lab: the receiver failed:" >&2; cat "$outdir/recv.err" >&2; exit 1; }
wait "$router_pid" || { echo "qbss-lab: the router failed:" >&2; tail -5 "$outdir/router.txt" >&2; exit 1; }
PIDS=()
"$PY" "$here/qbss-traffic.py" merge "$outdir/model.json" "$outdir/recv.json" \
  "$outdir/send.json" "$outdir/router.json" "$scale" "$outdir/measured.json"
echo "qbss-lab: $outdir/measured.json"
