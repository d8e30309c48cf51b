# shellcheck shell=bash
# What the lab scripts share: messages and exit codes, the namespaces a run
# makes and their cleanup, static neighbours, and the captures. Sourced by
# lab.sh, encap-lab.sh, netfilter-lab.sh and probe-lab.sh from their own
# directory, after they set LAB_NAME (the prefix of their messages):
#
#   LAB_NAME=lab
#   . "$(dirname "$0")/lab-lib.sh"
#
# Sourcing sets the traps: on exit (also on Ctrl-C) every process in PIDS is
# stopped, then anything still running in the run's namespaces, then the
# namespaces are deleted.

# --- messages ---------------------------------------------------------------
die() { echo "$LAB_NAME: $*" >&2; exit 1; }
# Exit status 77: the lab cannot run on this machine (the harness reports it
# as a skip only when asked to by name).
skip() { echo "$LAB_NAME: cannot run here: $*" >&2; exit 77; }

# require_root WHY TOOL...: skip unless root and every TOOL is installed.
require_root() {
  local why="$1" t
  shift
  [ "$(id -u)" = 0 ] || skip "needs root ($why)"
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || skip "missing tool: $t"
  done
}

# require_in_netns WHAT COMMAND...: skip (naming WHAT as unavailable) unless
# every COMMAND (one shell command line each) succeeds in a throwaway
# network namespace: the `--check` of a script whose rules or devices the
# kernel may lack.
require_in_netns() {
  local what="$1" ns="labcheck$$r$RANDOM" ok=1 cmd
  shift
  ip netns add "$ns" 2>/dev/null || skip "cannot create network namespaces"
  for cmd in "$@"; do
    ip netns exec "$ns" sh -c "$cmd" >/dev/null 2>&1 || ok=0
  done
  ip netns del "$ns"
  [ $ok = 1 ] || skip "$what unavailable"
}

# --- namespaces and cleanup -------------------------------------------------
PIDS=()     # background processes of the run, stopped on exit
LAB_NSS=()  # the namespaces the run made, deleted on exit

lab_cleanup() {
  local p ns
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  # Anything still running in the namespaces (a delayer whose wrapper was
  # killed, say) would outlive them and hold their files: stop it too.
  for ns in "${LAB_NSS[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  done
  for ns in "${LAB_NSS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap lab_cleanup EXIT
trap 'exit 130' INT TERM

# new_netns NS...: make each namespace (deleted on exit) with its loopback
# up, no IPv6 duplicate address detection (addresses are usable at once)
# and no router advertisements; set before any interface exists, so the
# interfaces inherit it.
new_netns() {
  local ns
  for ns in "$@"; do
    ip netns add "$ns"
    LAB_NSS+=("$ns")
    ip -n "$ns" link set lo up
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0
  done
}

# mac NS DEV: the interface's Ethernet address.
mac() { ip -n "$1" -o link show dev "$2" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'; }

# neigh NS DEV ADDR PEER-NS PEER-DEV: a static neighbour, so that no captured
# packet waits on ARP or neighbour discovery.
neigh() {
  ip -n "$1" neigh replace "$3" lladdr "$(mac "$4" "$5")" dev "$2" nud permanent
}

# --- captures ---------------------------------------------------------------
# tcpdump on an interface of a namespace, into $OUT/FILE, its messages in
# $OUT/FILE.tcpdump.log. CAPTURE_PRIO, if set, is the command that runs it
# (`nice -n -10`).
CAP_PIDS=()
CAP_FILES=()

# start_capture NS DEV FILE FILTER [TCPDUMP OPTION...]: start one and wait
# until it listens. Each packet is written as it is read (-U). Whether it
# is read at once (--immediate-mode) is the caller's choice: libpcap then
# gives each packet a ring frame of the snapshot length, so a full
# snapshot (-s 0) and a burst overflow the ring (the netfilter lab's 3,000
# segments at once: 138 dropped by the kernel).
start_capture() {
  local ns="$1" dev="$2" file="$3" filter="$4"
  shift 4
  local log="$OUT/$file.tcpdump.log"
  rm -f "$OUT/$file"
  # shellcheck disable=SC2086 # CAPTURE_PRIO is a command line
  ip netns exec "$ns" ${CAPTURE_PRIO:-} tcpdump -i "$dev" -n -U "$@" \
    -w "$OUT/$file" "$filter" >"$log" 2>&1 &
  PIDS+=($!)
  CAP_PIDS+=($!)
  CAP_FILES+=("$file")
  for _ in $(seq 200); do grep -q "listening on" "$log" && return 0; sleep 0.05; done
  die "tcpdump on $dev did not start: $(cat "$log")"
}

# The counts tcpdump prints, as "WRITTEN PASSED DROPPED": the packets it
# wrote, the packets the kernel passed its filter (Linux counts the ones it
# dropped among them) and the ones the kernel dropped. From its answer to
# SIGUSR1 (one line) or, after it ends, from its last words (three lines).
capture_counts() { # log
  local line
  line=$(grep -E 'packets captured, [0-9]+ packets? received by filter' "$1" | tail -n 1)
  if [ -n "$line" ]; then
    sed -E 's/.* ([0-9]+) packets? captured, ([0-9]+) packets? received by filter, ([0-9]+) packets? dropped by kernel.*/\1 \2 \3/' <<< "$line"
    return
  fi
}
capture_end_counts() { # log
  local w p d
  w=$(sed -nE 's/^([0-9]+) packets? captured$/\1/p' "$1" | tail -n 1)
  p=$(sed -nE 's/^([0-9]+) packets? received by filter$/\1/p' "$1" | tail -n 1)
  d=$(sed -nE 's/^([0-9]+) packets? dropped by kernel$/\1/p' "$1" | tail -n 1)
  [ -n "$w" ] && [ -n "$p" ] && [ -n "$d" ] && echo "$w $p $d"
}

# drain_capture PID LOG: wait (up to about 30 s) until the capture has
# written every packet the kernel passed it. DRAINED is then the count the
# kernel had passed (empty if tcpdump never answered).
DRAINED=
drain_capture() {
  local pid="$1" log="$2" before counts w p d
  DRAINED=
  for _ in $(seq 100); do
    before=$(grep -c 'packets received by filter,' "$log" || true)
    kill -USR1 "$pid" 2>/dev/null || return 0
    for _ in $(seq 100); do
      [ "$(grep -c 'packets received by filter,' "$log" || true)" -gt "$before" ] && break
      sleep 0.02
    done
    counts=$(capture_counts "$log")
    if [ -n "$counts" ]; then
      read -r w p d <<< "$counts"
      DRAINED=$p
      [ $((w + d)) -ge "$p" ] && return 0
    fi
    sleep 0.1
  done
}

# stop_captures: stop every capture, each once it has written all that the
# kernel passed it, and fail if one still had not. tcpdump interrupted
# leaves what is still in its ring buffer unwritten, and a capture starved
# of CPU falls behind by many thousands of packets: on a loaded CI machine
# one ended 12 MB before the end of a 30 MB download that way (no gap in
# it), and the lab read it as a transfer that stopped short. Asked with
# SIGUSR1, tcpdump prints how many packets it wrote and how many the
# kernel passed its filter; it is stopped when they agree.
#
# The capture ends where it was drained: a packet that arrives between the
# drain and the interrupt (one still crossing a 50 ms path: the truth
# matrix's window-rewrite4 under BBR once had one) passes the filter and is
# not written. It is reported, not failed: every packet before the end was
# written.
stop_captures() {
  local i pid file counts w p d drained=()
  for i in "${!CAP_PIDS[@]}"; do
    drain_capture "${CAP_PIDS[$i]}" "$OUT/${CAP_FILES[$i]}.tcpdump.log"
    drained[i]=$DRAINED
  done
  for pid in "${CAP_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${CAP_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for i in "${!CAP_PIDS[@]}"; do
    file="${CAP_FILES[$i]}"
    counts=$(capture_end_counts "$OUT/$file.tcpdump.log") \
      || die "tcpdump for $file printed no counts at its end: $(cat "$OUT/$file.tcpdump.log")"
    read -r w p d <<< "$counts"
    echo "$LAB_NAME: $file: $w packets written, $p passed the filter, $d dropped by the kernel" >&2
    local upto="${drained[i]:-$p}"
    [ "$upto" -le "$p" ] || upto=$p
    [ $((w + d)) -ge "$upto" ] \
      || die "$file is incomplete: tcpdump wrote $w of the $upto packets its filter passed before it was drained ($d dropped by the kernel)"
    [ $((w + d)) -ge "$p" ] \
      || echo "$LAB_NAME: $file: $((p - w - d)) packets arrived while it was stopped, after its end (not written)" >&2
  done
  CAP_PIDS=()
  CAP_FILES=()
}
