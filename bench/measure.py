#!/usr/bin/env python3
"""Run one command several times and record what it cost (CPU, RSS, wall).

Appends one JSON object per call to RESULTS (a JSON-lines file):
  {"id", "area", "role", "label", "input", "command", "status", "runs": [
     {"user_s", "sys_s", "cpu_s", "wall_s", "max_rss_kb", "exit"}], "stdout_lines"}

status is "ok", "not available" (the program does not exist) or "failed"
(an exit status outside --ok-status, default 0; the stderr tail is kept).
`firewall-check analyze` exits with 3 when it reports findings: its runs
pass --ok-status 0,3. The command's stdout goes to
/dev/null while timed; with --count-lines one extra, untimed run counts the
lines it prints (to check a fast tool printed as much as the anchors).

Usage: measure.py RESULTS --id ID --area AREA --role ours|anchor --label TEXT
                  [--input FILE] [--runs N] [--count-lines] [--ok-status 0,3]
                  -- CMD ARGS...
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"


def run_once(cmd):
    """One timed run of CMD under /usr/bin/time.

    Peak RSS is /usr/bin/time's (%M: the command's own high-water mark).
    CPU time comes from the kernel's rusage of /usr/bin/time as reaped by
    wait4, which includes the command it waited for, at microsecond rather
    than /usr/bin/time's 10 ms resolution (/usr/bin/time's own share is
    about a millisecond)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, \
         tempfile.TemporaryFile("w+b") as err:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen([TIME, "-o", tf.name, "-f", "%M %x"] + cmd,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=err)
        except OSError as e:
            return None, str(e)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        tf.seek(0)
        lines = [l for l in tf.read().splitlines() if l.strip()]
        err.seek(0)
        tail = err.read()[-600:].decode("utf-8", "replace")
    fields = lines[-1].split() if lines else []
    if len(fields) != 2:
        return None, tail
    return {
        "user_s": round(ru.ru_utime, 6),
        "sys_s": round(ru.ru_stime, 6),
        "cpu_s": round(ru.ru_utime + ru.ru_stime, 6),
        "wall_s": round(wall, 6),
        "max_rss_kb": int(fields[0]),
        "exit": int(fields[1]),
    }, tail


def count_lines(cmd):
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    n = 0
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        n += chunk.count(b"\n")
    p.wait()
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--id", required=True)
    ap.add_argument("--area", required=True)
    ap.add_argument("--role", choices=("ours", "anchor"), required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--input", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--count-lines", action="store_true")
    ap.add_argument("--ok-status", default="0",
                    help="comma-separated exit statuses that mean success (default 0)")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("the command must follow --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
    ok_status = {int(x) for x in a.ok_status.split(",") if x.strip()}
    rec = {"id": a.id, "area": a.area, "role": a.role, "label": a.label,
           "input": a.input, "command": " ".join(cmd), "runs": [],
           "status": "ok"}
    prog = cmd[0] if cmd else ""
    if not prog or (shutil.which(prog) is None and not os.access(prog, os.X_OK)):
        rec["status"] = "not available"
        rec["reason"] = f"{prog or 'command'} not found"
    else:
        for _ in range(a.runs):
            r, tail = run_once(cmd)
            if r is None or r["exit"] not in ok_status:
                rec["status"] = "failed"
                if tail.strip():
                    rec["reason"] = tail.strip().splitlines()[-1]
                else:
                    rec["reason"] = f"exit status {r['exit']}" if r else "no timing"
                if r is not None:
                    rec["runs"].append(r)
                break
            rec["runs"].append(r)
        if rec["status"] == "ok" and a.count_lines:
            rec["stdout_lines"] = count_lines(cmd)
    with open(a.results, "a") as f:
        f.write(json.dumps(rec) + "\n")
    runs = rec["runs"]
    best = min((r["cpu_s"] for r in runs), default=None)
    print(f"  {a.id}: {rec['status']}" + (f", best CPU {best:.3f} s" if best is not None else "")
          + (f" ({rec.get('reason')})" if rec["status"] != "ok" else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
