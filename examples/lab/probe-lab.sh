#!/usr/bin/env bash
# The probe lab: a line of five namespaces for `firewall-check probe`.
#
#   client ---- r1 ---- r2 (middlebox) ---- r3 ---- server
#      .41.2  .41.1  .42.1  .42.2  .43.1  .43.2  .44.1  .44.2     (198.18.x.y/24)
#
# r1 and r3 forward plainly; r2 applies the case's rules (below). A router
# answers an expired probe from the address of its interface towards the
# client, so the hops are 1 = 198.18.41.1 (r1), 2 = 198.18.42.2 (r2),
# 3 = 198.18.43.2 (r3), and the target 198.18.44.2:5201 is at TTL 4.
# ICMP rate limiting is switched off on the routers (net.ipv4.icmp_ratelimit
# = 0), so a run never waits for a token; real routers limit, and the probe
# retries a copy that got no answer once. PROBE_LAB_RATELIMIT=1 keeps
# Linux's limits, PROBE_LAB_SILENT=r1|r3 makes a router send no
# time-exceeded at all: the paths of the field, to time the probe on.
#
# usage: probe-lab.sh OUTDIR FIREWALL_CHECK CASE[,CASE...] [-- EXTRA PROBE ARGS]
#        probe-lab.sh --check       (exit 0 if it can run here, 77 if not)
#        probe-lab.sh --cases       (list the cases)
# For each case, r2's rules are replaced by the case's, conntrack is
# flushed, and `FIREWALL_CHECK probe 198.18.44.2:5201 --json EXTRA...` runs
# in the client namespace: OUTDIR/CASE.json, CASE.err, CASE.status.
# With PROBE_LAB_REFLECT=1, `FIREWALL_CHECK reflect --listen
# 198.18.44.2:7207` runs in the server namespace and the probe gets
# `--reflector 198.18.44.2:7207` (its log: OUTDIR/reflect.log), over the
# probes' family ([2001:db8:44::2]:7207 for IPv6: the reflector sends only
# to its control connection's peer), with a key made for the run: the
# reflector reads it from FIREWALL_CHECK_REFLECT_KEY, the probe gets
# `--reflector-key`.
# With PROBE_LAB_TEXT=CASE[,CASE...] those cases also run a second time
# without --json (the text for people): OUTDIR/CASE.txt, CASE.txt.status.
# With PROBE_LAB_FAMILY=6 the target is [2001:db8:44::2]:5201 and the
# case's rules go to ip6tables (nftables tables of family ip6); the IPv6
# addresses mirror the IPv4 ones (2001:db8:41::2 for 198.18.41.2, ...).
# With PROBE_LAB_PARTIAL=r1 or r3 that router quotes like an RFC 792 one:
# its ICMP and ICMPv6 time-exceeded messages (OUTPUT, -j NFQUEUE) go
# through lab-quote8, which cuts the quoted datagram to its IP header and 8
# bytes (ports and sequence number) and reinjects them (its log:
# OUTDIR/quote8.log, one line per message cut). Linux routers otherwise
# quote the whole probe. With PROBE_LAB_DELAY=r1:MS or r3:MS that router's
# time-exceeded messages go through lab-quote8 in its delay mode instead:
# held MS milliseconds, then passed on whole (a slow router). lab-quote8 is
# the lab crate's binary: $LAB_QUOTE8, else the one beside FIREWALL_CHECK
# (the lab crate's lab-firewall-check).
# Only 198.18.0.0/15 and 2001:db8::/32 are used; the namespaces have no
# other interface and no default route; they are deleted on exit (also on
# Ctrl-C).
set -euo pipefail

LAB_NAME=probe-lab
# shellcheck source=lab-lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lab-lib.sh"

# closed_port: no rule, the probe aimed at a port nothing listens on (5202).
# nat, dnat_pre and snat_post: NAT both ways, before routing only (DNAT) and
# after it only (SNAT). synproxy_fwd and synproxy_nft: the iptables target and
# the nftables statement, both in forward (the kernel allows SYNPROXY only in
# input and forward).
# Case name | rules on r2: iptables arguments, '@' between rules; a rule
# starting with "nft " is an nftables command, "sysctl " a sysctl.
CASES="
clean|
closed_port|
wscale_syn_pre|-t mangle -A PREROUTING -p tcp --tcp-flags SYN,ACK SYN -j TCPOPTSTRIP --strip-options wscale
wscale_syn_fwd|-t mangle -A FORWARD -p tcp --tcp-flags SYN,ACK SYN -j TCPOPTSTRIP --strip-options wscale
wscale_synack_fwd|-t mangle -A FORWARD -p tcp --tcp-flags SYN,ACK SYN,ACK -j TCPOPTSTRIP --strip-options wscale
wscale_synack_pre|-t mangle -A PREROUTING -p tcp --tcp-flags SYN,ACK SYN,ACK -j TCPOPTSTRIP --strip-options wscale
sack_ts_fwd|-t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options sack-permitted,timestamp
sack_ts_pre|-t mangle -A PREROUTING -p tcp -j TCPOPTSTRIP --strip-options sack-permitted,timestamp
exotic_fwd|-t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options 30,34,99,172,174,253,254
mss_pre|-t mangle -A PREROUTING -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1200
mss_fwd|-t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1200
dscp_bleach_pre|-t mangle -A PREROUTING -j DSCP --set-dscp 0
dscp_remark_fwd|-t mangle -A FORWARD -m dscp ! --dscp 0 -j DSCP --set-dscp-class cs1
dscp_remark_pre|-t mangle -A PREROUTING -p tcp -m dscp ! --dscp 0 -j DSCP --set-dscp-class cs1
dscp_map_fwd|-t mangle -A FORWARD -m dscp --dscp 46 -j DSCP --set-dscp 0@-t mangle -A FORWARD -m dscp --dscp 10 -j DSCP --set-dscp 12@-t mangle -A FORWARD -m dscp --dscp 63 -j DSCP --set-dscp 8
ecn_bleach_fwd|-t mangle -A FORWARD -j TOS --and-tos 0xfc@-t mangle -A FORWARD -p tcp -j ECN --ecn-tcp-remove
ecn_bleach_pre|-t mangle -A PREROUTING -p tcp -j TOS --and-tos 0xfc@-t mangle -A PREROUTING -p tcp -j ECN --ecn-tcp-remove
ecn_field_bleach_fwd|-t mangle -A FORWARD -j TOS --and-tos 0xfc
ecn_setup_drop_fwd|-A FORWARD -p tcp --syn -m ecn --ecn-tcp-ece --ecn-tcp-cwr -j DROP
tfo_drop_fwd|-A FORWARD -p tcp --syn -m length --length 101:65535 -j DROP
nat|-t nat -A PREROUTING -d %VIP% -p tcp --dport 80 -j DNAT --to-destination %SRV%@-t nat -A POSTROUTING -o r2n -p tcp -j MASQUERADE --to-ports 40000-40999
dnat_pre|-t nat -A PREROUTING -d %VIP% -p tcp --dport 80 -j DNAT --to-destination %SRV%
snat_post|-t nat -A POSTROUTING -o r2n -p tcp -j SNAT --to-source %SNAT%:40000-40999
window_fwd|nft add table ip campus@nft add chain ip campus wfwd { type filter hook forward priority 0 ; }@nft add rule ip campus wfwd tcp flags & (syn | ack) == syn tcp window set 1000
window_pre|nft add table ip campus@nft add chain ip campus wpre { type filter hook prerouting priority mangle ; }@nft add rule ip campus wpre tcp flags & (syn | ack) == syn tcp window set 1000
conntrack_strict|sysctl net.netfilter.nf_conntrack_tcp_be_liberal=0@-A FORWARD -m conntrack --ctstate INVALID -j DROP
campus|sysctl net.netfilter.nf_conntrack_tcp_be_liberal=0@-A FORWARD -m conntrack --ctstate INVALID -j DROP@nft add table ip campus@nft add chain ip campus raw_pre { type filter hook prerouting priority raw ; }@nft add rule ip campus raw_pre tcp flags & (syn | ack) == (syn | ack) reset tcp option window
synproxy_fwd|sysctl net.ipv4.tcp_syncookies=1@sysctl net.netfilter.nf_conntrack_tcp_loose=0@-t raw -A PREROUTING -i r2p -p tcp --syn --dport 5201 -j CT --notrack@-A FORWARD -i r2p -p tcp --dport 5201 -m conntrack --ctstate INVALID,UNTRACKED -j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460@-A FORWARD -m conntrack --ctstate INVALID -j DROP
synproxy_nft|sysctl net.ipv4.tcp_syncookies=1@sysctl net.netfilter.nf_conntrack_tcp_loose=0@nft add table ip campus@nft add chain ip campus raw_pre { type filter hook prerouting priority raw ; }@nft add rule ip campus raw_pre iifname r2p tcp dport 5201 tcp flags & (fin | syn | rst | ack) == syn notrack@nft add chain ip campus sp { type filter hook forward priority filter ; }@nft add rule ip campus sp iifname r2p tcp dport 5201 ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm@nft add rule ip campus sp ct state invalid drop
"

check_env() { require_root "network namespaces, netfilter, raw sockets" ip iptables nft python3 conntrack; }

case "${1:-}" in
  --check)
    check_env
    require_in_netns "iptables TCPOPTSTRIP / DSCP / ECN / NFQUEUE targets or nftables" \
      "iptables -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options wscale" \
      "iptables -t mangle -A FORWARD -j DSCP --set-dscp 0" \
      "iptables -t mangle -A FORWARD -p tcp -j ECN --ecn-tcp-remove" \
      "nft add table inet fcpcheck" \
      "iptables -A OUTPUT -p icmp --icmp-type time-exceeded -j NFQUEUE --queue-num 7"
    exit 0 ;;
  --cases)
    echo "$CASES" | sed -n 's/^\([a-z0-9_]*\)|.*/\1/p'
    exit 0 ;;
esac

[ $# -ge 3 ] || die "usage: probe-lab.sh OUTDIR FIREWALL_CHECK CASE[,CASE...] [-- EXTRA PROBE ARGS]"
OUT="$1"; BIN="$2"; LIST="$3"; shift 3
[ "${1:-}" = -- ] && shift
EXTRA=("$@")
check_env
QUOTE8="${LAB_QUOTE8:-$(dirname "$BIN")/lab-quote8}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

ID="fcp$$r$RANDOM"
C="$ID-c"; R1="$ID-r1"; R2="$ID-r2"; R3="$ID-r3"; S="$ID-s"

FAMILY="${PROBE_LAB_FAMILY:-4}"
case "$FAMILY" in
  4) TARGET=198.18.44.2:5201; IPT=iptables; NFT_FAM=ip
     VIP=198.18.45.80; SRV=198.18.44.2:5201; VIP_TARGET=198.18.45.80:80
     SNAT=198.18.43.1 ;;
  6) TARGET='[2001:db8:44::2]:5201'; IPT=ip6tables; NFT_FAM=ip6
     VIP=2001:db8:45::80; SRV='[2001:db8:44::2]:5201'; VIP_TARGET='[2001:db8:45::80]:80'
     SNAT='[2001:db8:43::1]' ;;
  *) die "PROBE_LAB_FAMILY must be 4 or 6" ;;
esac
new_netns "$C" "$R1" "$R2" "$R3" "$S"
# link N joins LEFT (198.18.4N.1 on the right side of LEFT... see the map above).
link() { # left-ns left-if left-addr right-ns right-if right-addr (IPv4; IPv6 mirrors it)
  local n6l n6r
  n6l="2001:db8:$(echo "$3" | cut -d. -f3)::$(echo "$3" | cut -d. -f4)"
  n6r="2001:db8:$(echo "$6" | cut -d. -f3)::$(echo "$6" | cut -d. -f4)"
  ip -n "$1" link add "$2" type veth peer name "$5" netns "$4"
  ip -n "$1" addr add "$3/24" dev "$2"
  ip -n "$4" addr add "$6/24" dev "$5"
  ip -n "$1" addr add "$n6l/64" dev "$2" nodad
  ip -n "$4" addr add "$n6r/64" dev "$5" nodad
  ip -n "$1" link set "$2" up
  ip -n "$4" link set "$5" up
}
link "$C" c0 198.18.41.2 "$R1" r1c 198.18.41.1
link "$R1" r1n 198.18.42.1 "$R2" r2p 198.18.42.2
link "$R2" r2n 198.18.43.1 "$R3" r3p 198.18.43.2
link "$R3" r3n 198.18.44.1 "$S" s0 198.18.44.2
ip -n "$C" route add 198.18.0.0/15 via 198.18.41.1
ip -n "$R1" route add 198.18.43.0/24 via 198.18.42.2
ip -n "$R1" route add 198.18.44.0/24 via 198.18.42.2
# The nat case's virtual address, translated by r2.
ip -n "$R1" route add 198.18.45.0/24 via 198.18.42.2
ip -n "$C" route add 198.18.45.0/24 via 198.18.41.1 2>/dev/null || true
ip -n "$R2" route add 198.18.41.0/24 via 198.18.42.1
ip -n "$R2" route add 198.18.44.0/24 via 198.18.43.2
ip -n "$R3" route add 198.18.41.0/24 via 198.18.43.1
ip -n "$R3" route add 198.18.42.0/24 via 198.18.43.1
ip -n "$S" route add 198.18.0.0/15 via 198.18.44.1
ip -n "$C" -6 route add 2001:db8::/32 via 2001:db8:41::1
ip -n "$R1" -6 route add 2001:db8:43::/64 via 2001:db8:42::2
ip -n "$R1" -6 route add 2001:db8:44::/64 via 2001:db8:42::2
ip -n "$R1" -6 route add 2001:db8:45::/64 via 2001:db8:42::2
ip -n "$R2" -6 route add 2001:db8:41::/64 via 2001:db8:42::1
ip -n "$R2" -6 route add 2001:db8:44::/64 via 2001:db8:43::2
ip -n "$R3" -6 route add 2001:db8:41::/64 via 2001:db8:43::1
ip -n "$R3" -6 route add 2001:db8:42::/64 via 2001:db8:43::1
ip -n "$S" -6 route add 2001:db8::/32 via 2001:db8:44::1
for r in "$R1" "$R2" "$R3"; do
  ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 \
    net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
    net.ipv6.conf.all.forwarding=1
  # Linux's default ICMP rate limits (6 at once, then 1 a second to one
  # host: icmp_ratelimit 1000 ms) with PROBE_LAB_RATELIMIT=1; off otherwise.
  if [ "${PROBE_LAB_RATELIMIT:-0}" != 1 ]; then
    ip netns exec "$r" sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
  fi
done
# PROBE_LAB_SILENT=r1|r3: that router sends no time-exceeded at all.
case "${PROBE_LAB_SILENT:-}" in
  "") ;;
  r1|r3)
    SR="$R1"; [ "$PROBE_LAB_SILENT" = r3 ] && SR="$R3"
    ip netns exec "$SR" iptables -A OUTPUT -p icmp --icmp-type time-exceeded -j DROP
    ip netns exec "$SR" ip6tables -A OUTPUT -p ipv6-icmp --icmpv6-type time-exceeded -j DROP ;;
  *) die "PROBE_LAB_SILENT must be r1 or r3" ;;
esac

# The server: a listener that reads each connection until it ends (at
# most 5 s), as a real server (iperf3 on 5201) keeps it open. It offers
# TCP Fast Open (RFC 7413): net.ipv4.tcp_fastopen=3 (client and server;
# the namespace's own setting, for IPv6 too) and TCP_FASTOPEN on the
# listener: its queue of pending Fast Open connections, 1024 (with 16, a
# run of 24 cases once got a SYN-ACK without a cookie in its 21st case,
# conntrack_strict). Linux's net/ipv4/tcp_fastopen.c and
# net/core/request_sock.c explain it: a Fast Open child that is reset (the
# probe resets each one) stays counted in the queue for 60 s
# (reqsk_fastopen_remove), and with the queue full tcp_fastopen_queue_check
# fails before any cookie is made, so the SYN-ACK carries none
# (TcpExtTCPFastOpenListenOverflow counts it).
ip netns exec "$S" sysctl -qw net.ipv4.tcp_fastopen=3
ip netns exec "$S" python3 -c '
import socket, threading
def serve(c):
    c.settimeout(5)
    try:
        while c.recv(65536):
            pass
    except OSError:
        pass
    c.close()
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 5201))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 1024)
s.listen(128)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
' &
PIDS+=($!)
for _ in $(seq 50); do
  ip netns exec "$S" ss -ltn 2>/dev/null | grep ':5201 ' >/dev/null && break
  sleep 0.1
done
if [ "${PROBE_LAB_REFLECT:-0}" = 1 ]; then
  RADDR=198.18.44.2:7207
  [ "$FAMILY" = 6 ] && RADDR='[2001:db8:44::2]:7207'
  KEY="probe-lab-$ID-$RANDOM$RANDOM"
  FIREWALL_CHECK_REFLECT_KEY="$KEY" ip netns exec "$S" "$BIN" reflect --listen "$RADDR" \
    2>"$OUT/reflect.log" &
  PIDS+=($!)
  for _ in $(seq 50); do
    grep -q listening "$OUT/reflect.log" && break
    sleep 0.1
  done
  EXTRA+=(--reflector "$RADDR" --reflector-key "$KEY")
fi
case "${PROBE_LAB_PARTIAL:-}" in
  "") PR= ;;
  r1) PR="$R1" ;;
  r3) PR="$R3" ;;
  *) die "PROBE_LAB_PARTIAL must be r1 or r3" ;;
esac
QMODE=()
if [ -n "${PROBE_LAB_DELAY:-}" ]; then
  [ -z "$PR" ] || die "PROBE_LAB_PARTIAL and PROBE_LAB_DELAY: one at a time"
  case "${PROBE_LAB_DELAY%%:*}" in
    r1) PR="$R1" ;;
    r3) PR="$R3" ;;
    *) die "PROBE_LAB_DELAY must be r1:MS or r3:MS" ;;
  esac
  QMODE=("delay=${PROBE_LAB_DELAY#*:}")
fi
if [ -n "$PR" ]; then
  [ -x "$QUOTE8" ] || die "no lab-quote8 binary at $QUOTE8 (set LAB_QUOTE8)"
  rm -f "$OUT/quote8.ready"
  ip netns exec "$PR" "$QUOTE8" 7 "$OUT/quote8.ready" "${QMODE[@]}" \
    2>"$OUT/quote8.log" &
  PIDS+=($!)
  for _ in $(seq 50); do
    [ -e "$OUT/quote8.ready" ] && break
    sleep 0.1
  done
  [ -e "$OUT/quote8.ready" ] || skip "lab-quote8 could not bind an NFQUEUE queue: $(cat "$OUT/quote8.log")"
  # No --queue-bypass: were lab-quote8 gone, the messages would be dropped,
  # never passed on as full quotes.
  ip netns exec "$PR" iptables -A OUTPUT -p icmp --icmp-type time-exceeded -j NFQUEUE --queue-num 7
  ip netns exec "$PR" ip6tables -A OUTPUT -p ipv6-icmp --icmpv6-type time-exceeded -j NFQUEUE --queue-num 7
fi
# One real connection: the path forwards, and every neighbour is resolved
# before the first probe.
ip netns exec "$C" python3 -c '
import socket
for a in ("198.18.44.2", "2001:db8:44::2"):
    socket.create_connection((a, 5201), 3).close()
' || die "the lab does not forward"

rules_for() { echo "$CASES" | sed -n "s/^$1|//p"; }

# Empties r2's connection tracking table (every family) before each probe
# run, with conntrack-tools' `conntrack -F`. Writing to
# /proc/net/nf_conntrack, as this script did before, flushes nothing on
# Linux (the file is read-only: "Permission denied", hidden by `|| true`),
# so each case inherited the entries of the cases before it. A probe's
# random source ports then now and then met an entry of an earlier run (a
# connection it reset: CLOSE): behind synproxy_fwd the prober's ACK
# belonged to that entry, so it was no longer INVALID, never reached the
# SYNPROXY target and went on to the server, which had no such connection
# and reset it, the data byte after it too: `ect0_data` "dropped"
# (examples/lab/README.md).
flush_conntrack() {
  ip netns exec "$R2" conntrack -F >/dev/null 2>&1 || die "cannot flush r2's conntrack table"
}

IFS=, read -r -a WANT <<< "$LIST"
for case in "${WANT[@]}"; do
  # A here-string, not a pipe: echo writes line by line, grep -q exits at
  # its match, and under pipefail the echo's SIGPIPE failed the check (a CI
  # run said "unknown case wscale_synack_pre").
  grep -q "^$case|" <<< "$CASES" || die "unknown case $case"
  for t in filter mangle raw nat; do
    ip netns exec "$R2" iptables -t "$t" -F
    ip netns exec "$R2" ip6tables -t "$t" -F
  done
  ip netns exec "$R2" nft delete table "$NFT_FAM" campus 2>/dev/null || true
  ip netns exec "$R2" sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=0 \
    net.netfilter.nf_conntrack_tcp_loose=1 net.ipv4.tcp_syncookies=1 2>/dev/null || true
  rules="$(rules_for "$case")"
  if [ -n "$rules" ]; then
    IFS='@' read -r -a RULES <<< "$rules"
    for r in "${RULES[@]}"; do
      r="${r//%VIP%/$VIP}"
      r="${r//%SRV%/$SRV}"
      r="${r//%SNAT%/$SNAT}"
      case "$r" in
        # shellcheck disable=SC2086
        "nft "*) ip netns exec "$R2" ${r// ip campus/ $NFT_FAM campus} ;;
        # shellcheck disable=SC2086
        "sysctl "*) ip netns exec "$R2" sysctl -qw ${r#sysctl } ;;
        # shellcheck disable=SC2086
        *) ip netns exec "$R2" "$IPT" $r ;;
      esac
    done
  fi
  flush_conntrack
  set +e
  t="$TARGET"
  case "$case" in
    nat|dnat_pre) t="$VIP_TARGET" ;;
    # Nothing listens on 5202: the server answers SYNs with RST.
    closed_port) t="${TARGET%:*}:5202" ;;
  esac
  ip netns exec "$C" "$BIN" probe "$t" --json "${EXTRA[@]}" \
    >"$OUT/$case.json" 2>"$OUT/$case.err"
  echo $? >"$OUT/$case.status"
  if [[ ",${PROBE_LAB_TEXT:-}," == *",$case,"* ]]; then
    flush_conntrack
    ip netns exec "$C" "$BIN" probe "$t" "${EXTRA[@]}" \
      >"$OUT/$case.txt" 2>>"$OUT/$case.err"
    echo $? >"$OUT/$case.txt.status"
  fi
  set -e
  # Each namespace's counters after the case (ICMP sent and rate-limited,
  # drops), for a failure's post-mortem.
  for ns in "$R1:r1" "$R2:r2" "$R3:r3" "$S:server"; do
    ip netns exec "${ns%%:*}" nstat -az >"$OUT/$case.${ns#*:}.nstat" 2>/dev/null || true
  done
  # The probe's nftables table must be gone once it has exited.
  ip netns exec "$C" nft list tables >"$OUT/$case.tables"
  ip netns exec "$R2" "$IPT-save" >"$OUT/$case.rules"
done
