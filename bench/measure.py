#!/usr/bin/env python3
"""Run one command several times under /usr/bin/time and record what it cost.

Appends one JSON object per call to RESULTS (a JSON-lines file):
  {"id", "area", "role", "label", "input", "command", "status", "runs": [
     {"user_s", "sys_s", "cpu_s", "wall_s", "max_rss_kb", "exit"}], "stdout_lines"}

status is "ok", "not available" (the program does not exist) or "failed"
(non-zero exit; the stderr tail is kept). The command's stdout goes to
/dev/null while timed; with --count-lines one extra, untimed run counts the
lines it prints (to check a fast tool printed as much as the anchors).

Usage: measure.py RESULTS --id ID --area AREA --role ours|anchor --label TEXT
                  [--input FILE] [--runs N] [--count-lines] -- CMD ARGS...
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

TIME = "/usr/bin/time"
FMT = "%U %S %e %M %x"


def run_once(cmd):
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, \
         tempfile.TemporaryFile("w+b") as err:
        p = subprocess.run([TIME, "-o", tf.name, "-f", FMT] + cmd,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=err)
        tf.seek(0)
        lines = [l for l in tf.read().splitlines() if l.strip()]
        err.seek(0)
        tail = err.read()[-600:].decode("utf-8", "replace")
    # /usr/bin/time prints "Command exited with non-zero status N" first.
    fields = lines[-1].split() if lines else []
    if len(fields) != 5:
        return None, tail
    user, sys_, wall, rss, code = fields
    return {
        "user_s": float(user),
        "sys_s": float(sys_),
        "cpu_s": round(float(user) + float(sys_), 3),
        "wall_s": float(wall),
        "max_rss_kb": int(rss),
        "exit": int(code),
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
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("the command must follow --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
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
            if r is None or r["exit"] != 0:
                rec["status"] = "failed"
                rec["reason"] = tail.strip().splitlines()[-1] if tail.strip() else "no timing"
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
