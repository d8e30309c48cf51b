#!/usr/bin/env bash
# The firewall-check lab: a client, a middlebox and a server, each in its own
# network namespace, joined by two veth pairs:
#
#   client c0 ----- mi [middlebox] mo ----- s0 server
#   198.18.1.2    198.18.1.1   198.18.2.1   198.18.2.2
#   2001:db8:1::2 2001:db8:1::1 2001:db8:2::1 2001:db8:2::2
#
# The middlebox routes between the two links and applies the case's real
# netfilter rules (iptables / ip6tables). A real Linux TCP transfer (xfer.py)
# runs from client to server and back, and tcpdump records it on the client's
# interface (inside.pcap) and on the server's interface (outside.pcap); each
# namespace's nstat counters are left in OUTDIR/{client,middlebox,server}.nstat.
#
# Only 198.18.0.0/15 and 2001:db8::/32 are used, the namespaces have no other
# interface and no default route, so no packet can leave them. Namespace names
# are unique per run ($LAB_NETNS-c, -m, -s when the lab harness gives a
# prefix) and deleted on exit, whatever happens.
#
# usage: lab.sh CASE OUTDIR [--bytes N] [--up-bytes N] [--delay-ms D] [--snaplen S] [--cc cubic|reno|bbr]
#                           [--client-rmem-max N] [--client-rcvbuf N] [--server-sndbuf N] [--pause-ms D] [--chunk-bytes N]
#                           [--no-timestamps]
#   --client-rmem-max N   the client namespace's net.ipv4.tcp_rmem max (the
#                         autotuning cap of the download's receiver; per netns)
#   --client-rcvbuf N     the client socket's SO_RCVBUF (replaces the case's)
#   --server-sndbuf N     the server socket's SO_SNDBUF (the kernel doubles it; no
#                         send-buffer autotuning): one that holds the whole download
#                         keeps the sender supplied however late a loaded host runs
#                         the application
#   --pause-ms D          pause4: the server's pause between chunks (default 10)
#   --chunk-bytes N       pause4: every chunk N bytes (default: 8 to 64 KB, varying)
#   --no-timestamps       the client offers no TCP timestamps (its namespace's
#                         net.ipv4.tcp_timestamps 0), so the connection has none
#        lab.sh --list
#        lab.sh --check          (exit 0 if the lab can run here, 77 if not)
# exit status: 0 ok, 77 cannot run here (not root, missing tool), other: failure.
set -euo pipefail

LAB_DIR="$(cd "$(dirname "$0")" && pwd)"
# The Python interpreter ($LAB_PYTHON from the lab harness: the real binary, not a
# version manager's shim that costs its own start-up at every call).
PY="${LAB_PYTHON:-python3}"
CASES="clean4 clean6 wscale-syn4 wscale-synack4 wscale-synack6 sack-ts4 ts-data4
mss4 mss6 dscp-bleach4 dscp-remark4 dscp-bleach6 ecn-bleach4 nat4 nat6 synproxy4 synproxy6 campus
rcvbuf-small4 window-rewrite4 tbf4 sndbuf-small4 slow-app4 dnat4 dnat6 drop4 loss4 pause4"

LAB_NAME=lab
# shellcheck source=lab-lib.sh
. "$LAB_DIR/lab-lib.sh"

check_env() { require_root "network namespaces, netfilter" ip iptables ip6tables tcpdump python3; }

case "${1:-}" in
  --list) echo "$CASES" | tr ' ' '\n' | tr -s '\n'; exit 0 ;;
  --check)
    check_env
    require_in_netns "iptables TCPOPTSTRIP target" \
      "iptables -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options wscale"
    exit 0 ;;
esac

[ $# -ge 2 ] || die "usage: lab.sh CASE OUTDIR [--bytes N] [--up-bytes N] [--delay-ms D] [--snaplen S]"
CASE="$1"; OUT="$2"; shift 2
BYTES=150000
UP_BYTES=
DELAY_MS=0
SNAPLEN=200
# The endpoints' congestion control, per socket: CUBIC, Linux's default,
# unless --cc says otherwise (this machine's own default may be BBR, whose
# pacing the kernel counts as busy time rather than window-limited time).
CC=cubic
CC_GIVEN=
CLIENT_RMEM_MAX=
NO_TIMESTAMPS=
CLIENT_RCVBUF=
SERVER_SNDBUF=
PAUSE_MS=10
CHUNK_BYTES=
while [ $# -gt 0 ]; do
  case "$1" in
    --cc) CC="$2"; CC_GIVEN=1; shift 2 ;;
    --bytes) BYTES="$2"; shift 2 ;;
    --up-bytes) UP_BYTES="$2"; shift 2 ;;
    --delay-ms) DELAY_MS="$2"; shift 2 ;;
    --snaplen) SNAPLEN="$2"; shift 2 ;;
    --client-rmem-max) CLIENT_RMEM_MAX="$2"; shift 2 ;;
    --no-timestamps) NO_TIMESTAMPS=1; shift ;;
    --client-rcvbuf) CLIENT_RCVBUF="$2"; shift 2 ;;
    --server-sndbuf) SERVER_SNDBUF="$2"; shift 2 ;;
    --pause-ms) PAUSE_MS="$2"; shift 2 ;;
    --chunk-bytes) CHUNK_BYTES="$2"; shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
tr ' ' '\n' <<< "$CASES" | grep -x -- "$CASE" >/dev/null || die "unknown case '$CASE' (lab.sh --list)"
check_env
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

ID="${LAB_NETNS:-tpl$$r$RANDOM}"
C="$ID-c"; M="$ID-m"; S="$ID-s"

inC() { ip netns exec "$C" "$@"; }
inM() { ip netns exec "$M" "$@"; }
inS() { ip netns exec "$S" "$@"; }

# --- topology ---------------------------------------------------------------
new_netns "$C" "$M" "$S"
ip -n "$C" link add c0 type veth peer name mi netns "$M"
ip -n "$S" link add s0 type veth peer name mo netns "$M"
# Segment at the real MTU so each capture shows wire-sized packets, as a
# physical NIC would, instead of veth's 64 KB offload super-packets.
for dev in "$C:c0" "$M:mi" "$M:mo" "$S:s0"; do
  ip -n "${dev%%:*}" link set "${dev#*:}" gso_max_size 1500 gso_max_segs 1 2>/dev/null || true
  ip -n "${dev%%:*}" link set "${dev#*:}" up
done
# In order, as on a wire: each veth's receive work steered to one CPU (RPS),
# the client's link to the first CPU, the server's to the second (one CPU
# for all four gathered the work there and, under load, thinned the client's
# ACKs). Packets handed to a veth from different CPUs (the delayer's
# verdicts, a sender's softirq and its process) otherwise wait in different
# CPUs' backlogs and can come out reordered: under load the client saw 3 or
# 4 segments out of order in 2 of 12 30-MB downloads (TcpExtTCPOFOQueue;
# the server retransmitted nothing), none in 12 with this.
second=$(( $(nproc) > 1 ? 2 : 1 ))
for dev in "$C:c0:1" "$M:mi:1" "$M:mo:$second" "$S:s0:$second"; do
  mask=${dev##*:}; dev=${dev%:*}
  ip netns exec "${dev%%:*}" sh -c "echo $mask > /sys/class/net/${dev#*:}/queues/rx-0/rps_cpus" 2>/dev/null \
    || echo "lab: cannot steer ${dev#*:}'s receive to one CPU (no RPS): packets may be reordered under load" >&2
done
ip -n "$C" addr add 198.18.1.2/24 dev c0
ip -n "$C" addr add 2001:db8:1::2/64 dev c0 nodad
ip -n "$M" addr add 198.18.1.1/24 dev mi
ip -n "$M" addr add 2001:db8:1::1/64 dev mi nodad
ip -n "$M" addr add 198.18.2.1/24 dev mo
ip -n "$M" addr add 2001:db8:2::1/64 dev mo nodad
ip -n "$S" addr add 198.18.2.2/24 dev s0
ip -n "$S" addr add 2001:db8:2::2/64 dev s0 nodad
# Routes only for the lab's own prefixes: nothing else is reachable.
ip -n "$C" route add 198.18.0.0/15 via 198.18.1.1
ip -n "$C" -6 route add 2001:db8::/32 via 2001:db8:1::1
ip -n "$S" route add 198.18.0.0/15 via 198.18.2.1
ip -n "$S" -6 route add 2001:db8::/32 via 2001:db8:2::1
inM sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

# --- the case ---------------------------------------------------------------
FAM=4
SRV_PORT=5201
DST=198.18.2.2
CLIENT_ARGS=()
SERVER_ARGS=()
ipt() { inM iptables "$@"; }
ip6t() { inM ip6tables "$@"; }
case "$CASE" in
  clean4) ;;
  clean6) FAM=6 ;;
  wscale-syn4)
    ipt -t mangle -A FORWARD -p tcp --tcp-flags SYN,ACK SYN -j TCPOPTSTRIP --strip-options wscale ;;
  wscale-synack4|campus)
    # The client no longer scales but the server does: the server's scaled
    # window reads as a few hundred bytes at the client, so keep the upload
    # to a request's size.
    UP_BYTES="${UP_BYTES:-4000}"
    ipt -t mangle -A FORWARD -p tcp --tcp-flags SYN,ACK SYN,ACK -j TCPOPTSTRIP --strip-options wscale ;;
  wscale-synack6)
    FAM=6
    UP_BYTES="${UP_BYTES:-4000}"
    ip6t -t mangle -A FORWARD -p tcp --tcp-flags SYN,ACK SYN,ACK -j TCPOPTSTRIP --strip-options wscale ;;
  sack-ts4)
    ipt -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options sack-permitted,timestamp ;;
  ts-data4)
    ipt -t mangle -A FORWARD -p tcp --tcp-flags SYN NONE -j TCPOPTSTRIP --strip-options timestamp ;;
  mss4)
    ipt -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1200 ;;
  mss6)
    FAM=6
    ip6t -t mangle -A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1200 ;;
  dscp-bleach4)
    CLIENT_ARGS=(--tos 0x28)   # AF11
    ipt -t mangle -A FORWARD -j DSCP --set-dscp 0 ;;
  dscp-remark4)
    CLIENT_ARGS=(--tos 0x28)   # AF11
    ipt -t mangle -A FORWARD -j DSCP --set-dscp-class CS1 ;;
  dscp-bleach6)
    FAM=6
    CLIENT_ARGS=(--tos 0xb8)   # EF
    ip6t -t mangle -A FORWARD -j DSCP --set-dscp 0 ;;
  ecn-bleach4)
    # Both ends use ECN; the middlebox clears the ECN field of every packet
    # it forwards (ECT(0) -> Not-ECT), leaving the DSCP alone.
    inC sysctl -qw net.ipv4.tcp_ecn=1
    inS sysctl -qw net.ipv4.tcp_ecn=1
    ipt -t mangle -A FORWARD -p tcp -j TOS --and-tos 0xfc ;;
  nat4)
    # The client talks to a published address; the middlebox rewrites both
    # ends (DNAT to the real server, SNAT with port translation to its own
    # address) and strips timestamps, so only payload, IP ID and timing are
    # left to match the two sides.
    DST=198.19.0.80
    SRV_PORT_PUBLIC=80
    CLIENT_ARGS=(--bind-port 33000)
    ipt -t nat -A PREROUTING -i mi -p tcp -d 198.19.0.80 --dport 80 -j DNAT --to-destination 198.18.2.2:5201
    ipt -t nat -A POSTROUTING -o mo -p tcp -j SNAT --to-source 198.18.2.1:40000-40999
    ipt -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options timestamp ;;
  dnat4)
    # Destination NAT only (port forwarding): the client talks to a
    # published address and port, the middlebox rewrites the destination of
    # the client's packets to the real server and translates the replies
    # back; the source is left alone.
    DST=198.19.0.80
    SRV_PORT_PUBLIC=80
    ipt -t nat -A PREROUTING -i mi -p tcp -d 198.19.0.80 --dport 80 -j DNAT --to-destination 198.18.2.2:5201 ;;
  drop4)
    # A middlebox that really drops: every 25th forwarded data segment (IP
    # length 100 and up) is discarded; the senders retransmit.
    ipt -A FORWARD -p tcp -m length --length 100:65535 -m statistic --mode nth --every 25 --packet 12 -j DROP ;;
  dnat6)
    FAM=6
    DST=2001:db8:ffff::80
    SRV_PORT_PUBLIC=80
    ip6t -t nat -A PREROUTING -i mi -p tcp -d 2001:db8:ffff::80 --dport 80 -j DNAT --to-destination '[2001:db8:2::2]:5201' ;;
  nat6)
    FAM=6
    DST=2001:db8:ffff::80
    SRV_PORT_PUBLIC=80
    CLIENT_ARGS=(--bind-port 33000)
    ip6t -t nat -A PREROUTING -i mi -p tcp -d 2001:db8:ffff::80 --dport 80 -j DNAT --to-destination '[2001:db8:2::2]:5201'
    ip6t -t nat -A POSTROUTING -o mo -p tcp -j SNAT --to-source '[2001:db8:2::1]:40000-40999'
    ip6t -t mangle -A FORWARD -p tcp -j TCPOPTSTRIP --strip-options sack-permitted ;;
  synproxy4|synproxy6)
    # Handshake proxying (SYN cookies) as a DDoS-protecting firewall does it:
    # the middlebox answers the client's SYN itself, opens its own handshake
    # to the server, and translates sequence numbers and timestamps after.
    if [ "$CASE" = synproxy6 ]; then FAM=6; T=ip6t; else T=ipt; fi
    inM sysctl -qw net.ipv4.tcp_syncookies=1 net.ipv4.tcp_timestamps=1
    inM sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0 2>/dev/null || true
    $T -t raw -A PREROUTING -i mi -p tcp --syn --dport "$SRV_PORT" -j CT --notrack
    $T -A FORWARD -i mi -p tcp --dport "$SRV_PORT" -m conntrack --ctstate INVALID,UNTRACKED \
      -j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460
    $T -A FORWARD -m conntrack --ctstate INVALID -j DROP ;;
  # What limited each transfer (the sender's TCP_INFO is recorded in
  # OUTDIR/server.tcpinfo.json for the download, client.tcpinfo.json for
  # the upload). The download is the bulk transfer in these cases.
  rcvbuf-small4)
    # The client's receive buffer (SO_RCVBUF 16 KB, doubled by the kernel,
    # no autotuning) is far below the path's BDP: receive-window-limited.
    UP_BYTES="${UP_BYTES:-1000}"
    CLIENT_ARGS=(--rcvbuf 16384) ;;
  window-rewrite4)
    # The seed firewall's act: the window field of every client segment is
    # rewritten to 20 (20 KB at the client's shift 10) on the way (nftables
    # `tcp window set`): the server
    # reads a small window although the client offers a large one.
    UP_BYTES="${UP_BYTES:-1000}"
    inM nft add table inet tpl
    inM nft add chain inet tpl tplfwd '{ type filter hook forward priority 0 ; }'
    inM nft add rule inet tpl tplfwd iifname mi 'tcp flags & syn == 0' tcp window set 20 ;;
  tbf4)
    # A 20 Mbit/s bottleneck (tbf) in front of the client, with large buffers
    # at both ends: the network (congestion window at the bottleneck) limits.
    UP_BYTES="${UP_BYTES:-1000}"
    inM tc qdisc add dev mi root tbf rate 20mbit burst 32kb latency 50ms ;;
  sndbuf-small4)
    # The server's send buffer (SO_SNDBUF 8 KB, doubled) limits the download.
    # Under BBR (the default here) the kernel books this time as
    # sndbuf-limited; under CUBIC it books it as plain busy time.
    [ -n "$CC_GIVEN" ] || CC=bbr
    UP_BYTES="${UP_BYTES:-1000}"
    SERVER_ARGS=(--sndbuf 8192) ;;
  slow-app4)
    # The server application writes 16 KB every 30 ms: the sender itself limits.
    UP_BYTES="${UP_BYTES:-1000}"
    SERVER_ARGS=(--write-delay-ms 30) ;;
  loss4)
    # 1% of the download's data segments (server to client: in at mo, IP
    # length 100 and up) dropped at random (netem is not needed): the
    # network, loss recovery and the congestion window after it, limits.
    UP_BYTES="${UP_BYTES:-1000}"
    ipt -A FORWARD -i mo -p tcp -m length --length 100:65535 -m statistic --mode random --probability 0.01 -j DROP ;;
  pause4)
    # The server application writes chunks of --chunk-bytes (default 8 to
    # 64 KB, the same sizes each run), pausing --pause-ms between them: a
    # writer that pauses, neither a window nor a buffer.
    UP_BYTES="${UP_BYTES:-1000}"
    [[ "$PAUSE_MS" =~ ^[0-9]+$ ]] || die "--pause-ms needs milliseconds"
    if [ -n "$CHUNK_BYTES" ]; then
      [[ "$CHUNK_BYTES" =~ ^[0-9]+$ ]] || die "--chunk-bytes needs a byte count"
      SERVER_ARGS=(--write-delay-ms "$PAUSE_MS" --chunk-min "$CHUNK_BYTES" --chunk-max "$CHUNK_BYTES")
    else
      SERVER_ARGS=(--write-delay-ms "$PAUSE_MS" --chunk-min 8192 --chunk-max 65536)
    fi ;;
esac
if [ "$FAM" = 6 ] && [ "$DST" = 198.18.2.2 ]; then DST=2001:db8:2::2; fi
# The receiver's buffer settings the options ask for (after the case's own).
[ -z "$NO_TIMESTAMPS" ] || inC sysctl -qw net.ipv4.tcp_timestamps=0
if [ -n "$CLIENT_RMEM_MAX" ]; then
  [[ "$CLIENT_RMEM_MAX" =~ ^[0-9]+$ ]] || die "--client-rmem-max needs a byte count"
  def=$(( CLIENT_RMEM_MAX < 131072 ? CLIENT_RMEM_MAX : 131072 ))
  inC sysctl -qw net.ipv4.tcp_rmem="4096 $def $CLIENT_RMEM_MAX"
fi
if [ -n "$CLIENT_RCVBUF" ]; then
  [[ "$CLIENT_RCVBUF" =~ ^[0-9]+$ ]] || die "--client-rcvbuf needs a byte count"
  CLIENT_ARGS+=(--rcvbuf "$CLIENT_RCVBUF")
fi
if [ -n "$SERVER_SNDBUF" ]; then
  [[ "$SERVER_SNDBUF" =~ ^[0-9]+$ ]] || die "--server-sndbuf needs a byte count"
  SERVER_ARGS+=(--sndbuf "$SERVER_SNDBUF")
fi
UP_BYTES="${UP_BYTES:-$BYTES}"

# Static neighbours, so the captured handshake is never delayed by ARP or ND.
neigh "$C" c0 198.18.1.1 "$M" mi;    neigh "$C" c0 2001:db8:1::1 "$M" mi
neigh "$M" mi 198.18.1.2 "$C" c0;    neigh "$M" mi 2001:db8:1::2 "$C" c0
neigh "$M" mo 198.18.2.2 "$S" s0;    neigh "$M" mo 2001:db8:2::2 "$S" s0
neigh "$S" s0 198.18.2.1 "$M" mo;    neigh "$S" s0 2001:db8:2::1 "$M" mo
CONNECT_PORT="${SRV_PORT_PUBLIC:-$SRV_PORT}"

# Priority over the machine's other work for what a lab measures: the
# delayer at real-time priority (a steady delay), the endpoints and the
# captures at nice -10 (a reader starved of CPU is not what the lab tests:
# under a load average of 16 on 2 cores, the advice lab's Python reader
# fell behind, its receive buffer filled and the kernel counted 92% of the
# time receive-window limited with a window that was big enough; the
# captures keep up with them). Not real-time for the endpoints: a bulk
# sender at real-time priority could starve the captures. A case that
# wants a slow application (slow_app4) sleeps on purpose, which priority
# does not change.
RT="nice -n -10"
if command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null; then RT="chrt -f 10"; fi
PRIO="nice -n -10"

# Optional path delay: hold each forwarded packet DELAY_MS/2 in each direction
# (netem is not always available; this uses an NFQUEUE userspace delayer).
if [ "$DELAY_MS" != 0 ]; then
  half=$((DELAY_MS * 500))   # microseconds per direction
  inM $RT "$PY" "$LAB_DIR/delay.py" 7 "$half" "$OUT/delay.ready" >"$OUT/delay.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do [ -e "$OUT/delay.ready" ] && break; sleep 0.05; done
  [ -e "$OUT/delay.ready" ] || die "delayer did not start: $(cat "$OUT/delay.log")"
  rm -f "$OUT/delay.ready"
  # Queued in mangle POSTROUTING: after the case's FORWARD rules; the hooks
  # after it (source NAT) still run once the packet is released.
  inM iptables -t mangle -A POSTROUTING -p tcp -j NFQUEUE --queue-num 7
  inM ip6tables -t mangle -A POSTROUTING -p tcp -j NFQUEUE --queue-num 7
fi

# --- captures ---------------------------------------------------------------
# A 32 MiB ring each (-B, in KiB): libpcap's default of 2 MiB holds about
# 13,000 records of a 96-byte snapshot, and a CI run's client-side capture
# of a 30 MB download fell that far behind under load (14,000 records
# dropped by the kernel, counted, but half the download unseen).
CAPTURE_PRIO="$PRIO"
start_capture "$C" c0 inside.pcap tcp -s "$SNAPLEN" --immediate-mode -B 32768
start_capture "$S" s0 outside.pcap tcp -s "$SNAPLEN" --immediate-mode -B 32768

# --- transfer ---------------------------------------------------------------
rm -f "$OUT/server.ready"
inS $PRIO "$PY" "$LAB_DIR/xfer.py" server "$SRV_PORT" "$FAM" "$OUT/server.ready" "$BYTES" \
  --info "$OUT/server.tcpinfo.json" --cc "$CC" ${SERVER_ARGS[@]+"${SERVER_ARGS[@]}"} \
  >"$OUT/server.log" 2>&1 &
SRV_PID=$!
PIDS+=($SRV_PID)
for _ in $(seq 200); do [ -e "$OUT/server.ready" ] && break; sleep 0.05; done
[ -e "$OUT/server.ready" ] || die "server did not start: $(cat "$OUT/server.log")"
rm -f "$OUT/server.ready"
inC $PRIO "$PY" "$LAB_DIR/xfer.py" client "$DST" "$CONNECT_PORT" "$FAM" "$UP_BYTES" \
  --info "$OUT/client.tcpinfo.json" --cc "$CC" ${CLIENT_ARGS[@]+"${CLIENT_ARGS[@]}"} \
  >"$OUT/client.log" 2>&1 || die "client failed: $(cat "$OUT/client.log")"
wait "$SRV_PID" || die "server failed: $(cat "$OUT/server.log")"
sleep 0.3   # let the last ACK and FIN reach both captures
# Each namespace's protocol counters (drops, out-of-order, retransmissions):
# what the kernels saw, for a failure's post-mortem.
for ns in "$C:client" "$M:middlebox" "$S:server"; do
  ip netns exec "${ns%%:*}" nstat -az > "$OUT/${ns#*:}.nstat" 2>/dev/null || true
done
stop_captures
cat "$OUT/client.log" "$OUT/server.log"
echo "lab: case $CASE done: $OUT/inside.pcap $OUT/outside.pcap"
