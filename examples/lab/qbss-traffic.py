#!/usr/bin/env python3
"""Real traffic for qbss-lab.sh: the scenario's streams as UDP and TCP sockets.

  qbss-traffic.py recv  MODEL_JSON EPOCH ADDR PORT_BASE OUT_JSON [STARTED READY]
  qbss-traffic.py send  MODEL_JSON EPOCH ADDR PORT_BASE OUT_JSON [STARTED]
  qbss-traffic.py merge MODEL_JSON RECV_JSON SEND_JSON ROUTER_JSON SCALE OUT_JSON

MODEL_JSON is `qbss-model --json --scale F` of the scenario: it gives each stream's
kind, marking (TOS byte), packet size, start and stop, UDP rate (already scaled) and
TCP congestion control. Stream k uses port PORT_BASE + k. Second i of every figure is
[EPOCH + i, EPOCH + i + 1) of the wall clock, which all namespaces share.

EPOCH is a Unix time, or @FILE: wait for FILE and read the Unix time from it (the lab
starts these processes first, and writes FILE once the router and its devices are
up). STARTED is created once the process is running (imports done), READY once the
receiver's sockets are bound and listening: the lab checks both come before second 0.

* UDP: datagrams of packet_bytes - 28 bytes, IP_TOS set, sent on an absolute schedule
  (packet n at start + n x size / rate; a late sender catches up, so the long-run rate
  is exact). SEND_JSON records per stream how late the first packet was (late_s), the
  worst lag behind the schedule (max_lag_s), and per second of the epoch the packets
  the schedule put there and those sent there (scheduled_per_second,
  sent_per_second): a stall's catch-up burst moves packets from one second to the next.
* TCP: one connection per stream, IP_TOS and TCP_CONGESTION set (cubic, reno, bbr),
  TCP_MAXSEG = packet_bytes - 40 (Linux takes the timestamp option's 12 bytes out of
  it, so each full segment is a packet_bytes IP packet), writing until the stop time,
  then closing abortively (SO_LINGER 0: unsent data is discarded, as qbss-model's
  sender sends nothing at or after its stop time).
* The receiver counts what arrives per second: UDP datagrams by the kernel's arrival
  time (SO_TIMESTAMPNS, so a receiver the machine stalls still counts each datagram
  in its second), TCP bytes as the application reads them (new data only, as
  qbss-model counts). Both are reported as IP packets of
  packet_bytes (TCP: bytes / MSS), the unit of qbss-model's bits_per_second.
* merge writes measured.json in qbss-model --json's shape plus "scale": bits and
  packets from the receiver, drops per stream and second from the router (policer and
  scheduler refusals), packets sent from the router's count of arrivals, TCP
  retransmissions from the sender's TCP_INFO; timeouts are not measured (null).
"""
import json
import os
import socket
import struct
import sys
import threading
import time

TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
TCP_HEADERS = 52  # IPv4 20 + TCP 20 + timestamps 12
UDP_HEADERS = 28


def load(path):
    with open(path) as f:
        return json.load(f)


def duration(model):
    return len(model["intervals"])


def touch(path):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(f"{time.time():.6f}\n")
        os.rename(path + ".tmp", path)


def epoch_of(arg):
    """A Unix time, or @FILE: waits (up to 60 s) for FILE and reads it."""
    if not arg.startswith("@"):
        return float(arg)
    path = arg[1:]
    deadline = time.time() + 60
    while not os.path.exists(path):
        if time.time() > deadline:
            raise SystemExit(f"qbss-traffic: no epoch in {path} after 60 s")
        # The lab writes FILE well ahead of second 0: no need to spin.
        time.sleep(0.02)
    with open(path) as f:
        return float(f.read().strip())


def guarded(errors, f, k, arg):
    """Runs a stream's thread; an exception is kept, so the process fails."""
    try:
        f(k, arg)
    except Exception as e:  # noqa: BLE001 (any failure of a stream fails the run)
        errors.append(f"stream {k}: {e!r}")


def fail(errors):
    for e in errors:
        sys.stderr.write(f"qbss-traffic: {e}\n")
    return 1 if errors else 0


def sleep_until(t):
    while True:
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.05) if d > 0.002 else d)


def recv(model, epoch_arg, addr, port_base, out, ready=None):
    n = duration(model)
    counts = [[0] * n for _ in model["streams"]]
    lock = threading.Lock()
    epoch = epoch_of(epoch_arg)
    end = epoch + n + 0.5

    def add(k, amount, t):
        i = int(t - epoch)
        if 0 <= i < n:
            with lock:
                counts[k][i] += amount

    # Every socket bound and listening before READY is written.
    socks = []
    for k, st in enumerate(model["streams"]):
        if st["kind"] == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            # Root may exceed net.core.rmem_max: 4 MB holds seconds of a stalled reader.
            s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 4 << 20)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port_base + k))
        if st["kind"] != "udp":
            s.listen(1)
        s.settimeout(0.2)
        socks.append(s)
    touch(ready)

    def udp(k, s):
        space = socket.CMSG_SPACE(16)
        while time.time() < end:
            try:
                _, anc, _, _ = s.recvmsg(65535, space)
            except socket.timeout:
                continue
            t = None
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                    sec, nsec = struct.unpack("qq", data[:16])
                    t = sec + nsec / 1e9
            add(k, 1, time.time() if t is None else t)

    def tcp(k, ls):
        conn = None
        while conn is None and time.time() < end:
            try:
                conn, _ = ls.accept()
            except socket.timeout:
                pass
        if conn is None:
            return
        conn.settimeout(0.2)
        while time.time() < end:
            try:
                # Small reads, so a second's data is counted in its second.
                b = conn.recv(16384)
            except socket.timeout:
                continue
            except ConnectionResetError:
                break
            if not b:
                break
            add(k, len(b), time.time())
        conn.close()

    errors = []
    threads = []
    for k, st in enumerate(model["streams"]):
        f = udp if st["kind"] == "udp" else tcp
        t = threading.Thread(target=guarded, args=(errors, f, k, socks[k]), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(max(0.0, end - time.time()) + 2)
    with open(out, "w") as f:
        json.dump({"counts": counts}, f)
    return fail(errors)


def send(model, epoch_arg, addr, port_base, out):
    n = duration(model)
    result = {}
    epoch = epoch_of(epoch_arg)

    def udp(k, st):
        size = st["packet_bytes"] - UDP_HEADERS
        rate = st["offered_bits_per_second"]
        gap = st["packet_bytes"] * 8 / rate
        start = epoch + st["start_s"]
        stop = epoch + min(st["stop_s"], n)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, st["tos"])
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_SNDBUFFORCE", 32), 4 << 20)
        payload = bytes(size)
        sent = 0
        # How late the sender was against its schedule: at the first packet,
        # and at worst (a stall makes a burst that moves packets between
        # seconds; the lab test reports it).
        late = max_lag = 0.0
        # Packets per second of the epoch: when the schedule said, and when
        # they were sent (the lab test allows what a stall moved).
        scheduled, actual = [0] * n, [0] * n
        sleep_until(start)
        while True:
            t = start + sent * gap
            if t >= stop:
                break
            now = time.time()
            if t > now:
                time.sleep(t - now)
                at = t
            else:
                max_lag = max(max_lag, now - t)
                if sent == 0:
                    late = now - t
                at = now
            try:
                s.sendto(payload, (addr, port_base + k))
            except (BlockingIOError, OSError):
                pass
            sent += 1
            for counts, when in ((scheduled, t), (actual, at)):
                i = int(when - epoch)
                if 0 <= i < n:
                    counts[i] += 1
        result[k] = {
            "sent": sent,
            "late_s": round(late, 6),
            "max_lag_s": round(max_lag, 6),
            "scheduled_per_second": scheduled,
            "sent_per_second": actual,
        }

    def tcp(k, st):
        start = epoch + st["start_s"]
        stop = epoch + min(st["stop_s"], n)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, st["tos"])
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, st.get("cc", "cubic").encode())
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, st["packet_bytes"] - 40)
        sleep_until(start)
        late = max(0.0, time.time() - start)
        s.connect((addr, port_base + k))
        s.settimeout(0.1)
        buf = bytes(1 << 16)
        while time.time() < stop:
            try:
                s.send(buf)
            except socket.timeout:
                pass
        info = s.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
        retrans = struct.unpack_from("I", info, 100)[0] if len(info) >= 104 else None
        result[k] = {"retransmits": retrans, "late_s": round(late, 6)}
        # Abortive close: what the socket still holds is discarded, as qbss-model's
        # sender sends nothing at or after its stop time.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()

    errors = []
    threads = []
    for k, st in enumerate(model["streams"]):
        f = udp if st["kind"] == "udp" else tcp
        t = threading.Thread(target=guarded, args=(errors, f, k, st), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    with open(out, "w") as f:
        json.dump({str(k): v for k, v in result.items()}, f)
    return fail(errors)


def merge(model, rcv, snd, router, scale, out):
    n = duration(model)
    streams = []
    per = []
    for k, st in enumerate(model["streams"]):
        c = rcv["counts"][k]
        if st["kind"] == "tcp":
            mss = st["packet_bytes"] - TCP_HEADERS
            pk = [round(b / mss) for b in c]
        else:
            pk = list(c)
        drops = [router["intervals"][i]["streams"][k]["drops"] for i in range(n)]
        per.append((pk, drops))
        m = dict(st)
        m["sent_packets"] = router["streams"][k]["sent_packets"]
        m["received_packets"] = sum(pk)
        m["dropped_packets"] = sum(drops)
        if st["kind"] == "tcp":
            m["retransmits"] = snd.get(str(k), {}).get("retransmits")
            m["timeouts"] = None
        streams.append(m)
    intervals = []
    for i in range(n):
        row = []
        for k, st in enumerate(model["streams"]):
            pk, drops = per[k]
            row.append(
                {
                    "name": st["name"],
                    "bits_per_second": pk[i] * st["packet_bytes"] * 8,
                    "packets": pk[i],
                    "drops": drops[i],
                }
            )
        intervals.append({"start_s": i, "end_s": i + 1, "streams": row})
    doc = {
        "scenario": model["scenario"],
        "link": model["link"],
        "streams": streams,
        "intervals": intervals,
        "scale": scale,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main(argv):
    if len(argv) in (7, 9) and argv[1] == "recv":
        model = load(argv[2])
        if len(argv) == 9:
            touch(argv[7])
        return recv(model, argv[3], argv[4], int(argv[5]), argv[6], argv[8] if len(argv) == 9 else None)
    if len(argv) in (7, 8) and argv[1] == "send":
        model = load(argv[2])
        if len(argv) == 8:
            touch(argv[7])
        return send(model, argv[3], argv[4], int(argv[5]), argv[6])
    if len(argv) == 8 and argv[1] == "merge":
        merge(load(argv[2]), load(argv[3]), load(argv[4]), load(argv[5]), float(argv[6]), argv[7])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
