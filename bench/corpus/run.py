#!/usr/bin/env python3
"""Run firewall-check over a corpus of captures other people wrote.

    bench/corpus/fetch [DIR]                       # once: the captures
    python3 bench/corpus/run.py [DIR] [--bin PATH] [--out FILE]

For every capture under DIR (default target/corpus): `dump --json`
(segments, exit status), `analyze --json` (connections, exit status, and
for exit 3 the reasons the JSON gives: a connection's `wscale_mismatch`
with its evidence and confidence, a `linux_drops` entry, a
`window_limited` direction with its limit's evidence), and `compare FILE
FILE --json` (a capture against itself: must find nothing). Each run has a
time limit (60 s). Writes one row per file (TSV, default
target/corpus/results.tsv) and prints the figures: files, connections,
exit statuses, the exit-3 reasons by kind and confidence, self-compare
failures, and the time per file.

The review of each exit 3 is kept in bench/corpus/REVIEW.md.
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
LIMIT_S = 60


def run(cmd):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=LIMIT_S)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return "timeout", b"", b"", time.monotonic() - start


def exit3_reasons(doc):
    """The reasons analyze's JSON gives for exit status 3, one string each:
    `wscale_mismatch:EVIDENCE:CONFIDENCE`, `linux_drop:SEGMENT`,
    `window_limited:EVIDENCE:CONFIDENCE`."""
    out = []
    for c in doc.get("connections", []):
        n = c.get("negotiated") or {}
        if n.get("wscale_mismatch"):
            ev = n.get("wscale_mismatch_evidence") or {}
            out.append(
                "wscale_mismatch:%s:%s"
                % (ev.get("kind", "-"), ev.get("confidence", "-"))
            )
        for d in n.get("linux_drops") or []:
            out.append("linux_drop:%s:%s" % (d.get("segment", "-"), d.get("confidence", "-")))
        for name, d in (c.get("directions") or {}).items():
            if d.get("window_limited"):
                ev = (d.get("limit") or {}).get("receive_window_evidence") or {}
                out.append(
                    "window_limited:%s:%s"
                    % (ev.get("kind", "-"), d.get("window_limited_confidence", "-"))
                )
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?", default=os.path.join(ROOT, "target", "corpus"))
    ap.add_argument("--bin", default=None, help="firewall-check binary (default: build release)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    binary = a.bin
    if binary is None:
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "firewall-check"], cwd=ROOT, check=True
        )
        tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        binary = os.path.join(tdir, "release", "firewall-check")
    out = a.out or os.path.join(a.dir, "results.tsv")
    files = sorted(
        os.path.join(dp, f)
        for dp, _, fs in os.walk(a.dir)
        if "/." not in dp
        for f in fs
        if f != os.path.basename(out)
    )
    rows = []
    for path in files:
        rel = os.path.relpath(path, a.dir)
        d_rc, d_out, _, d_t = run([binary, "dump", path, "--json"])
        segments = d_out.count(b"\n") if d_rc != "timeout" else 0
        a_rc, a_out, a_err, a_t = run([binary, "analyze", path, "--json"])
        conns, reasons = 0, []
        try:
            doc = json.loads(a_out)
            conns = len(doc.get("connections", []))
            reasons = exit3_reasons(doc)
        except (ValueError, AttributeError):
            pass
        c_rc, c_out, _, _ = run([binary, "compare", path, path, "--json"])
        c_findings = -1
        try:
            c_findings = len(json.loads(c_out).get("findings", []))
        except (ValueError, AttributeError):
            pass
        rows.append(
            dict(
                file=rel,
                dump_rc=d_rc,
                segments=segments,
                analyze_rc=a_rc,
                connections=conns,
                reasons=reasons,
                compare_rc=c_rc,
                compare_findings=c_findings,
                analyze_s=a_t,
                dump_s=d_t,
            )
        )
    with open(out, "w") as f:
        f.write(
            "file\tdump_rc\tsegments\tanalyze_rc\tconnections\tcompare_rc\t"
            "compare_findings\tanalyze_s\treasons\n"
        )
        for r in rows:
            f.write(
                "%s\t%s\t%d\t%s\t%d\t%s\t%d\t%.3f\t%s\n"
                % (
                    r["file"],
                    r["dump_rc"],
                    r["segments"],
                    r["analyze_rc"],
                    r["connections"],
                    r["compare_rc"],
                    r["compare_findings"],
                    r["analyze_s"],
                    ",".join(r["reasons"]),
                )
            )
    print("files: %d (rows in %s)" % (len(rows), out))
    print("TCP segments (dump): %d" % sum(r["segments"] for r in rows))
    print("files with TCP connections: %d" % sum(1 for r in rows if r["connections"]))
    print("connections (analyze): %d" % sum(r["connections"] for r in rows))
    for tool in ("dump_rc", "analyze_rc", "compare_rc"):
        c = collections.Counter(str(r[tool]) for r in rows)
        print("%s: %s" % (tool, dict(sorted(c.items()))))
    reasons = collections.Counter(x for r in rows for x in r["reasons"])
    print("judgments behind exit status 3, by kind, evidence and confidence (only high ones set it):")
    for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print("  %5d  %s" % (v, k))
    bad = [r["file"] for r in rows if r["compare_findings"] > 0]
    print("self-compare with findings: %d %s" % (len(bad), bad[:10]))
    times = sorted(r["analyze_s"] for r in rows)
    if times:
        print(
            "analyze time per file: median %.3f s, p95 %.3f s, max %.3f s, total %.1f s"
            % (
                statistics.median(times),
                times[int(0.95 * (len(times) - 1))],
                times[-1],
                sum(times),
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
