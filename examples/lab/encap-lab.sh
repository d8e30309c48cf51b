#!/usr/bin/env bash
# The encapsulation lab: a client, two routers joined by a VXLAN tunnel over
# an underlay link, and a server, each in its own network namespace:
#
#   client c0 --- a0 [r1] u1 ====== u2 [r2] b0 --- s0 server
#   198.18.31.2  198.18.31.1  198.18.32.1/.2  198.18.33.1  198.18.33.2
#                    vx0 198.18.34.1 <-- VXLAN VNI 42, UDP 4789 --> vx0 198.18.34.2
#
# The routers forward between their LAN and the tunnel (VXLAN over IPv4,
# MTU 1450) and clamp the MSS of SYNs into the tunnel to its path MTU
# (iptables TCPMSS --clamp-mss-to-pmtu). A real Linux TCP transfer (xfer.py,
# both ends with net.ipv4.tcp_ecn=1, the client's packets marked AF41 by
# IP_TOS) runs from client to server and back; tcpdump records it bare on
# the client's interface (inside.pcap) and encapsulated on r1's underlay
# interface (underlay.pcap): the two sides of r1, the encapsulation point.
#
# Only 198.18.0.0/15 and 2001:db8::/32 are used, the namespaces have no other interface and no
# default route, so no packet can leave them. Namespace names are unique per
# run ($LAB_NETNS-c, -r1, -r2, -s) and deleted on exit, whatever happens.
# Offloads (GRO, TSO, GSO) are off on every interface, so the captures show
# wire-sized packets.
#
# usage: encap-lab.sh CASE OUTDIR [--bytes N]
#        encap-lab.sh --list
#        encap-lab.sh --check   (exit 0 if the lab can run here, 77 if not)
# cases:
#   vxlan-inherit4   the tunnel copies the inner DS field ("tos inherit")
#   vxlan-fixed4     the tunnel's outer DSCP is fixed (Linux's default, tos 0)
#   vxlan-ce4        as inherit; r2 marks the outer header of ECT(0) packets
#                    CE (iptables TOS on the encapsulated packets): r1's
#                    decapsulation must carry the mark to the inner header
#   vxlan-ect1-4     as inherit; r2 sets the outer ECN field of ECT(0)
#                    packets to ECT(1) (RFC 6040 Figure 4 gives ECT(1) inside)
#   vxlan-bleach4    as inherit; r1 clears the outer ECN field after
#                    encapsulating (what RFC 6040's compatibility mode gives)
#   vxlan-inherit6   as vxlan-inherit4, the transfer over IPv6 (2001:db8:31::2
#                    to 2001:db8:33::2) in the same IPv4 tunnel
#   vxlan-ce-lost4   as vxlan-ce4, and r1 sets the inner ECN field of the
#                    decapsulated CE packets back to ECT(0) (iptables TOS on
#                    packets from vx0): a tunnel egress that ignores the
#                    outer ECN field, as RFC 2003-era code does
# exit status: 0 ok, 77 cannot run here (not root, missing tool), other: failure.
set -euo pipefail

LAB_DIR="$(cd "$(dirname "$0")" && pwd)"
PY="${LAB_PYTHON:-python3}"
CASES="vxlan-inherit4 vxlan-fixed4 vxlan-ce4 vxlan-ect1-4 vxlan-bleach4 vxlan-ce-lost4 vxlan-inherit6"

LAB_NAME=encap-lab
# shellcheck source=lab-lib.sh
. "$LAB_DIR/lab-lib.sh"

check_env() { require_root "network namespaces, netfilter" ip iptables ip6tables tcpdump ethtool python3; }

case "${1:-}" in
  --list) echo "$CASES" | tr ' ' '\n' | tr -s '\n'; exit 0 ;;
  --check)
    check_env
    require_in_netns "VXLAN devices" \
      "ip link add vxp type vxlan id 1 local 198.18.32.1 remote 198.18.32.2 dstport 4789"
    exit 0 ;;
esac

[ $# -ge 2 ] || die "usage: encap-lab.sh CASE OUTDIR [--bytes N]"
CASE="$1"; OUT="$2"; shift 2
BYTES=150000
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) BYTES="$2"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
tr ' ' '\n' <<< "$CASES" | grep -x -- "$CASE" >/dev/null || die "unknown case '$CASE' (encap-lab.sh --list)"
check_env
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

ID="${LAB_NETNS:-tpe$$r$RANDOM}"
C="$ID-c"; R1="$ID-r1"; R2="$ID-r2"; S="$ID-s"

in_() { local ns="$1"; shift; ip netns exec "$ns" "$@"; }

# --- topology ---------------------------------------------------------------
new_netns "$C" "$R1" "$R2" "$S"
ip -n "$C" link add c0 type veth peer name a0 netns "$R1"
ip -n "$R1" link add u1 type veth peer name u2 netns "$R2"
ip -n "$R2" link add b0 type veth peer name s0 netns "$S"
ip -n "$C" addr add 198.18.31.2/24 dev c0
ip -n "$R1" addr add 198.18.31.1/24 dev a0
ip -n "$R1" addr add 198.18.32.1/24 dev u1
ip -n "$R2" addr add 198.18.32.2/24 dev u2
ip -n "$R2" addr add 198.18.33.1/24 dev b0
ip -n "$S" addr add 198.18.33.2/24 dev s0
ip -n "$C" addr add 2001:db8:31::2/64 dev c0 nodad
ip -n "$R1" addr add 2001:db8:31::1/64 dev a0 nodad
ip -n "$R2" addr add 2001:db8:33::1/64 dev b0 nodad
ip -n "$S" addr add 2001:db8:33::2/64 dev s0 nodad

# The tunnel: VXLAN VNI 42 between the underlay addresses, its outer DS
# field by the case.
TOS=(tos inherit)
case "$CASE" in
  vxlan-fixed4) TOS=() ;;   # Linux's default: outer DSCP 0, ECN per RFC 6040
esac
ip -n "$R1" link add vx0 type vxlan id 42 local 198.18.32.1 remote 198.18.32.2 dev u1 \
  dstport 4789 ttl 64 ${TOS[@]+"${TOS[@]}"}
ip -n "$R2" link add vx0 type vxlan id 42 local 198.18.32.2 remote 198.18.32.1 dev u2 \
  dstport 4789 ttl 64 ${TOS[@]+"${TOS[@]}"}
ip -n "$R1" addr add 198.18.34.1/24 dev vx0
ip -n "$R2" addr add 198.18.34.2/24 dev vx0
ip -n "$R1" addr add 2001:db8:34::1/64 dev vx0 nodad
ip -n "$R2" addr add 2001:db8:34::2/64 dev vx0 nodad

for dev in "$C:c0" "$R1:a0" "$R1:u1" "$R1:vx0" "$R2:u2" "$R2:vx0" "$R2:b0" "$S:s0"; do
  ns="${dev%%:*}"; d="${dev#*:}"
  ip -n "$ns" link set "$d" up
  # Wire-sized packets in every capture: no segmentation or receive offload.
  in_ "$ns" ethtool -K "$d" gro off gso off tso off >/dev/null 2>&1 || true
  in_ "$ns" ethtool -K "$d" tx-udp_tnl-segmentation off >/dev/null 2>&1 || true
done

# Static neighbours (the handshake is never delayed by ARP), also for the
# routers' addresses inside the tunnel.
neigh "$C" c0 198.18.31.1 "$R1" a0;   neigh "$R1" a0 198.18.31.2 "$C" c0
neigh "$R1" u1 198.18.32.2 "$R2" u2;  neigh "$R2" u2 198.18.32.1 "$R1" u1
neigh "$R1" vx0 198.18.34.2 "$R2" vx0; neigh "$R2" vx0 198.18.34.1 "$R1" vx0
neigh "$R2" b0 198.18.33.2 "$S" s0;   neigh "$S" s0 198.18.33.1 "$R2" b0
neigh "$C" c0 2001:db8:31::1 "$R1" a0;   neigh "$R1" a0 2001:db8:31::2 "$C" c0
neigh "$R1" vx0 2001:db8:34::2 "$R2" vx0; neigh "$R2" vx0 2001:db8:34::1 "$R1" vx0
neigh "$R2" b0 2001:db8:33::2 "$S" s0;   neigh "$S" s0 2001:db8:33::1 "$R2" b0

# Routes only for the lab's own prefixes, the far LAN through the tunnel.
ip -n "$C" route add 198.18.0.0/15 via 198.18.31.1
ip -n "$S" route add 198.18.0.0/15 via 198.18.33.1
ip -n "$R1" route add 198.18.33.0/24 via 198.18.34.2 dev vx0
ip -n "$R2" route add 198.18.31.0/24 via 198.18.34.1 dev vx0
ip -n "$C" -6 route add 2001:db8::/32 via 2001:db8:31::1
ip -n "$S" -6 route add 2001:db8::/32 via 2001:db8:33::1
ip -n "$R1" -6 route add 2001:db8:33::/64 via 2001:db8:34::2 dev vx0
ip -n "$R2" -6 route add 2001:db8:31::/64 via 2001:db8:34::1 dev vx0
for r in "$R1" "$R2"; do
  in_ "$r" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
  # MSS clamping for the tunnel's overhead, on SYNs into the tunnel.
  for t in iptables ip6tables; do
    in_ "$r" "$t" -t mangle -A FORWARD -o vx0 -p tcp --tcp-flags SYN,RST SYN \
      -j TCPMSS --clamp-mss-to-pmtu
  done
done
in_ "$C" sysctl -qw net.ipv4.tcp_ecn=1
in_ "$S" sysctl -qw net.ipv4.tcp_ecn=1

# --- the case ---------------------------------------------------------------
# Rules on the encapsulated packets (UDP 4789) after encapsulation: mangle
# POSTROUTING sees the outer header.
case "$CASE" in
  vxlan-ce4|vxlan-ce-lost4)
    in_ "$R2" iptables -t mangle -A POSTROUTING -o u2 -p udp --dport 4789 \
      -m tos --tos 0x02/0x03 -j TOS --set-tos 0x03/0x03
    if [ "$CASE" = vxlan-ce-lost4 ]; then
      in_ "$R1" iptables -t mangle -A FORWARD -i vx0 -p tcp -m tos --tos 0x03/0x03 \
        -j TOS --set-tos 0x02/0x03
    fi ;;
  vxlan-ect1-4)
    in_ "$R2" iptables -t mangle -A POSTROUTING -o u2 -p udp --dport 4789 \
      -m tos --tos 0x02/0x03 -j TOS --set-tos 0x01/0x03 ;;
  vxlan-bleach4)
    in_ "$R1" iptables -t mangle -A POSTROUTING -o u1 -p udp --dport 4789 \
      -j TOS --and-tos 0xfc ;;
esac

# --- captures ---------------------------------------------------------------
# A 32 MiB ring each, as lab.sh's.
start_capture "$C" c0 inside.pcap tcp -s 256 --immediate-mode -B 32768
start_capture "$R1" u1 underlay.pcap "udp port 4789" -s 256 --immediate-mode -B 32768

# --- transfer ---------------------------------------------------------------
FAM=4; DST=198.18.33.2
case "$CASE" in *6) FAM=6; DST=2001:db8:33::2 ;; esac
rm -f "$OUT/server.ready"
in_ "$S" "$PY" "$LAB_DIR/xfer.py" server 5201 "$FAM" "$OUT/server.ready" "$BYTES" \
  --info "$OUT/server.tcpinfo.json" --cc cubic >"$OUT/server.log" 2>&1 &
SRV_PID=$!
PIDS+=($SRV_PID)
for _ in $(seq 200); do [ -e "$OUT/server.ready" ] && break; sleep 0.05; done
[ -e "$OUT/server.ready" ] || die "server did not start: $(cat "$OUT/server.log")"
rm -f "$OUT/server.ready"
in_ "$C" "$PY" "$LAB_DIR/xfer.py" client "$DST" 5201 "$FAM" "$BYTES" --tos 0x88 \
  --info "$OUT/client.tcpinfo.json" --cc cubic >"$OUT/client.log" 2>&1 \
  || die "client failed: $(cat "$OUT/client.log")"
wait "$SRV_PID" || die "server failed: $(cat "$OUT/server.log")"
sleep 0.3   # let the last ACK and FIN reach both captures
for ns in "$C:client" "$R1:r1" "$R2:r2" "$S:server"; do
  ip netns exec "${ns%%:*}" nstat -az > "$OUT/${ns#*:}.nstat" 2>/dev/null || true
done
ip -n "$R1" -s link show vx0 > "$OUT/r1.vx0.txt" 2>&1 || true
stop_captures
cat "$OUT/client.log" "$OUT/server.log"
echo "encap-lab: case $CASE done: $OUT/inside.pcap $OUT/underlay.pcap"
