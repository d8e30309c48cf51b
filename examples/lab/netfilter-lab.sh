#!/usr/bin/env bash
# The netfilter lab: the real iptables TCPMSS and TCPOPTSTRIP targets on a
# router namespace, fed random TCP segments (lab-nfsend), captured on both
# sides, for `firewall-check rewrite` to be checked against byte for byte:
#
#   sender a0 ------ ri [router] ro ------ b0 receiver
#   198.18.21.2  198.18.21.1   198.18.22.1   198.18.22.2
#                 MTU 1500        MTU 1400
#
# The router's rules (mangle FORWARD, in this order):
#   -p tcp --tcp-flags SYN,RST SYN -j TCPMSS (--set-mss N | --clamp-mss-to-pmtu)
#   -p tcp -j TCPOPTSTRIP --strip-options LIST
# The receiver drops everything it gets (so it answers nothing); tcpdump
# records the sender's interface (inside.pcap) and the receiver's
# (outside.pcap). Only 198.18.0.0/15 is used; the namespaces have no other
# interface and no default route; they are deleted on exit (names
# $LAB_NETNS-a, -r, -b when the lab harness gives a prefix).
#
# usage: netfilter-lab.sh OUTDIR COUNT SEED (--set-mss N | --clamp-mss-to-pmtu) LIST
#        netfilter-lab.sh --check   (exit 0 if it can run here, 77 if not)
# With --clamp-mss-to-pmtu the path MTU is 1400 (the receiver's link).
set -euo pipefail

LAB_DIR="$(cd "$(dirname "$0")" && pwd)"
# The sender of the random segments: the lab crate's lab-nfsend binary
# ($LAB_NFSEND, set by the lab harness; usage: lab-nfsend SRC DST COUNT SEED).
NFSEND="${LAB_NFSEND:-}"
LAB_NAME=netfilter-lab
# shellcheck source=lab-lib.sh
. "$LAB_DIR/lab-lib.sh"

check_env() { require_root "network namespaces, netfilter" ip iptables tcpdump; }

if [ "${1:-}" = --check ]; then
  check_env
  require_in_netns "iptables TCPMSS / TCPOPTSTRIP targets" \
    "iptables -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options wscale" \
    "iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1000"
  exit 0
fi

[ $# -ge 5 ] || die "usage: netfilter-lab.sh OUTDIR COUNT SEED (--set-mss N | --clamp-mss-to-pmtu) LIST"
OUT="$1"; COUNT="$2"; SEED="$3"; shift 3
[ -x "$NFSEND" ] || die "LAB_NFSEND must name the lab-nfsend binary (the lab harness sets it)"
case "$1" in
  --set-mss) MSS_ARGS=(--set-mss "$2"); shift 2 ;;
  --clamp-mss-to-pmtu) MSS_ARGS=(--clamp-mss-to-pmtu); shift ;;
  *) die "expected --set-mss N or --clamp-mss-to-pmtu, got $1" ;;
esac
LIST="$1"
check_env
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

ID="${LAB_NETNS:-nfl$$r$RANDOM}"
A="$ID-a"; R="$ID-r"; B="$ID-b"
new_netns "$A" "$R" "$B"
for ns in "$A" "$R" "$B"; do
  # IPv4 only: no IPv6 neighbour discovery in the captures.
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip -n "$A" link add a0 type veth peer name ri netns "$R"
ip -n "$B" link add b0 type veth peer name ro netns "$R"
ip -n "$R" link set ro mtu 1400
ip -n "$B" link set b0 mtu 1400
for dev in "$A:a0" "$R:ri" "$R:ro" "$B:b0"; do
  ip -n "${dev%%:*}" link set "${dev#*:}" up
  # In order, as on a wire (lab.sh explains): the checks pair the two
  # captures' packets in order.
  ip netns exec "${dev%%:*}" sh -c "echo 1 > /sys/class/net/${dev#*:}/queues/rx-0/rps_cpus" 2>/dev/null \
    || echo "netfilter-lab: cannot steer ${dev#*:}'s receive to one CPU (no RPS)" >&2
done
ip -n "$A" addr add 198.18.21.2/24 dev a0
ip -n "$R" addr add 198.18.21.1/24 dev ri
ip -n "$R" addr add 198.18.22.1/24 dev ro
ip -n "$B" addr add 198.18.22.2/24 dev b0
ip -n "$A" route add 198.18.0.0/15 via 198.18.21.1
ip -n "$B" route add 198.18.0.0/15 via 198.18.22.1
ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1
# Static neighbours: no packet waits on ARP, no ARP in the captures.
neigh "$A" a0 198.18.21.1 "$R" ri
neigh "$R" ro 198.18.22.2 "$B" b0

ip netns exec "$R" iptables -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS "${MSS_ARGS[@]}"
ip netns exec "$R" iptables -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options "$LIST"
ip netns exec "$B" iptables -A INPUT -j DROP

start_capture "$A" a0 inside.pcap tcp -q -s 0 -B 8192
start_capture "$B" b0 outside.pcap tcp -q -s 0 -B 8192

ip netns exec "$A" "$NFSEND" 198.18.21.2 198.18.22.2 "$COUNT" "$SEED"
sleep 1
stop_captures
ip netns exec "$R" iptables -t mangle -L FORWARD -v -n -x > "$OUT/counters.txt"
