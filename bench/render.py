#!/usr/bin/env python3
"""Render BENCHMARKS.md from the results of one `bench/run` (stdlib only).

Reads RESULTS_DIR (bench/out/results):
  machine.txt, command.txt, elapsed_s.txt    the run itself
  criterion/<package>/**/new/*.json          criterion estimates, per package
  criterion-status.txt                        "<package> <bench target> <status>"
  tools.jsonl                                 timings written by bench/measure.py
  capture-*.json                              what the capture generator wrote
  qbss-*.json                                 qbss-model --json outputs
and prints markdown on stdout. Every figure printed comes from those files.
"""

import json
import os
import re
import sys

RES = sys.argv[1] if len(sys.argv) > 1 else "bench/out/results"

# --- goals (thresholds from issue 8) -----------------------------------------
ETHERPARSE_MIN_RATIO = 2.0      # at least 2x faster than etherparse
BARE_MAX_RATIO = 1.5            # within 1.5x of the bare bounds-checked loop
WRR_64_VS_4_MAX = 1.2           # 64 queues within 1.2x of 4 queues
TCPDUMP_MIN_RATIO = 1.0         # dump --json faster than tcpdump -nn -v (CPU)
TSHARK_MIN_RATIO = 20.0         # at least 20x faster than tshark
ANALYZE_MIN_SEG_PER_S = 5e6     # analyze >= 5 million segments per second
BIG_MAX_RSS_MB = 200            # 1 GB capture analysed in < 200 MB RSS
RSS_GROWTH_MAX = 1.5            # memory follows open connections: RSS grows < 1.5x with capture size
ANCHOR_MIN_CPU_RATIO = 10.0     # issue 12: analyze --json >= 10x faster than tcptrace -l and tshark conv
ANCHOR_MAX_RSS_SHARE = 0.25     # issue 12: ... with at most a quarter of their peak RSS
QBSS_MIN_EVENTS_PER_S = 10e6    # >= 10 million simulated packet events/s
QBSS_TRANSPAC_MAX_S = 1.0       # transpac preset well under a second
QBSS_10G_MAX_S = 10.0           # 60 s at 10 Gbit/s under 10 s

ANCHOR_TOKENS = ["etherparse", "smoltcp", "pnet", "bare", "reference", "vecdeque",
                 "std_drr", "ref_drr", "naive", "linux_c", "anchor"]
OURS_TOKENS = ["ours", "tcp-options", "tcp_options", "tcpoptions", "dscp", "wrr",
               "bdp", "this_crate", "crate"]


def read_text(name, default=""):
    try:
        with open(os.path.join(RES, name)) as f:
            return f.read().strip()
    except OSError:
        return default


def read_json(name):
    try:
        with open(os.path.join(RES, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt_ns(ns):
    if ns is None:
        return "n/a"
    if ns < 1e3:
        return f"{ns:.2f} ns" if ns < 10 else f"{ns:.1f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_rate(x, unit=""):
    if x is None:
        return "n/a"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f} {suf}{unit}"
    return f"{x:.1f} {unit}"


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}x"


def verdict(ok):
    return "n/a" if ok is None else ("**met**" if ok else "**not met**")


# --- machine -----------------------------------------------------------------
machine = {}
for line in read_text("machine.txt").splitlines():
    if "=" in line:
        k, v = line.split("=", 1)
        machine[k] = v
command = read_text("command.txt", "bench/run")
elapsed = read_text("elapsed_s.txt", "?")

# --- criterion ---------------------------------------------------------------
def load_criterion():
    """{package: [bench dict]} from criterion's new/ estimates."""
    out = {}
    base = os.path.join(RES, "criterion")
    if not os.path.isdir(base):
        return out
    for pkg in sorted(os.listdir(base)):
        rows = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(base, pkg)):
            if os.path.basename(dirpath) != "new":
                continue
            if "benchmark.json" not in filenames or "estimates.json" not in filenames:
                continue
            try:
                with open(os.path.join(dirpath, "benchmark.json")) as f:
                    b = json.load(f)
                with open(os.path.join(dirpath, "estimates.json")) as f:
                    e = json.load(f)
            except (OSError, ValueError):
                continue
            ci = e["median"]["confidence_interval"]
            rows.append({
                "group": b.get("group_id") or "",
                "function": b.get("function_id") or "",
                "value": b.get("value_str") or "",
                "full_id": b.get("full_id") or "",
                "throughput": b.get("throughput"),
                "median_ns": e["median"]["point_estimate"],
                "lo_ns": ci["lower_bound"],
                "hi_ns": ci["upper_bound"],
            })
        out[pkg] = sorted(rows, key=lambda r: r["full_id"])
    return out


def split_impl(row):
    """(case, implementation, is_ours) for a criterion row, by naming convention:
    one path component names the implementation (an anchor such as etherparse,
    smoltcp, pnet, bare loop, reference; or ours), the rest names the case."""
    parts = [("function", p) for p in row["function"].split("/") if p]
    if row["value"]:
        parts.append(("value", row["value"]))
    group_parts = [("group", p) for p in row["group"].split("/") if p]
    ordered = parts + group_parts
    # The first part naming an anchor; failing that, the first naming ours.
    pick = None
    for tokens, ours in ((ANCHOR_TOKENS, False), (OURS_TOKENS, True)):
        for i, (_, p) in enumerate(ordered):
            if any(t in p.lower() for t in tokens):
                pick = (i, ours)
                break
        if pick is not None:
            break
    if pick is None:
        return row["full_id"], None, None
    i, ours = pick
    impl = ordered[i][1]
    n = len(parts)
    # case name: group components first, then function and value components
    rest = [p for j, (_, p) in enumerate(ordered) if j != i and j >= n] + \
           [p for j, (_, p) in enumerate(ordered) if j != i and j < n]
    case = "/".join(dict.fromkeys(rest)) or row["group"]
    return case, impl, ours


def ours_reference(impls):
    """The 'ours' row that goals are judged on: the strict variant if any,
    else the slowest of our variants (conservative)."""
    ours = [(name, r) for name, (r, is_ours) in impls.items() if is_ours]
    if not ours:
        return None, None
    strict = [x for x in ours if "strict" in x[0].lower()]
    if strict:
        return strict[0]
    return max(ours, key=lambda x: x[1]["median_ns"])


criterion = load_criterion()
crit_status = [l.split() for l in read_text("criterion-status.txt").splitlines() if l.strip()]

goals = []   # (area, goal text, measured text, ok or None)


CRITERION_NOISE = re.compile(
    r"^(\S.*\s)?\s*(time|thrpt|change):\s+\[|^Found \d+ outliers|^\s+\d+ \(\d+\.\d+%\) (high|low) (mild|severe)"
    r"|^Benchmarking |^\s*(Performance has|No change in performance|Change within noise)|^Warning: Unable to complete"
    r"|^\s*$|^\S+$")


def plain_outputs(pkg):
    """(target, text) for the package's bench targets that printed figures of
    their own (a summary, a ratio table, or a whole non-criterion report):
    their stdout with criterion's per-benchmark lines left out."""
    out = []
    for s in crit_status:
        if len(s) < 3 or s[0] != pkg or not s[2].startswith("ok"):
            continue
        text = read_text(os.path.join("logs", f"bench-{pkg}-{s[1]}.out"))
        if re.search(r"time:\s+\[", text):
            kept = [l for l in text.splitlines() if not CRITERION_NOISE.search(l)]
        else:
            kept = text.splitlines()
        kept = "\n".join(kept).strip()
        if kept:
            out.append((s[1], kept))
    return out


def criterion_section(pkg, title, md):
    rows = criterion.get(pkg, [])
    statuses = [s for s in crit_status if s and s[0] == pkg]
    md.append(f"## {title}\n")
    for target, text in plain_outputs(pkg):
        md.append(f"Bench binary `{target}` (`cargo bench -p {pkg} --bench {target}`) printed, in this run:\n")
        md.append("```\n" + text + "\n```\n")
    if not rows and plain_outputs(pkg):
        return {}
    if not rows:
        if statuses:
            md.append("Bench targets: " + ", ".join(f"`{s[1]}` ({' '.join(s[2:])})" for s in statuses) + ". ")
            md.append("No criterion estimates were produced: **not available**.\n")
        else:
            md.append("No criterion benchmark found in this package: **not available**.\n")
        return {}
    if any(s[2] != "ok" for s in statuses):
        md.append("Bench targets with problems: " + ", ".join(
            f"`{s[1]}` ({' '.join(s[2:])})" for s in statuses if s[2] != "ok") + ".\n")
    cases = {}
    loose = []
    for r in rows:
        case, impl, ours = split_impl(r)
        if impl is None:
            loose.append(r)
        else:
            cases.setdefault(case, {})[impl] = (r, ours)
    compared = {c: v for c, v in cases.items() if any(not o for _, o in v.values())
                and any(o for _, o in v.values())}
    if compared:
        md.append("Median time per iteration (criterion), and each row's time divided by "
                  "ours (above 1: we are faster by that factor; the bare loop is the floor).\n")
        md.append("| case | implementation | median | 95% CI | throughput | time / ours |")
        md.append("|---|---|---:|---:|---:|---:|")
        for case in sorted(compared):
            impls = compared[case]
            ref_name, ref = ours_reference(impls)
            for name in sorted(impls, key=lambda n: (not impls[n][1], n)):
                r, is_ours = impls[name]
                ratio = r["median_ns"] / ref["median_ns"] if ref else None
                label = f"**{name}**" if is_ours else name
                rtxt = "1.00x (ours)" if name == ref_name else fmt_ratio(ratio)
                md.append(f"| {case} | {label} | {fmt_ns(r['median_ns'])} | "
                          f"{fmt_ns(r['lo_ns'])} – {fmt_ns(r['hi_ns'])} | {throughput(r)} | {rtxt} |")
        md.append("")
    other = [(c, n, v) for c, impls in cases.items() if c not in compared
             for n, v in impls.items()]
    if other or loose:
        md.append("Benchmarks without an anchor in the same case:\n")
        md.append("| benchmark | median | 95% CI | throughput |")
        md.append("|---|---:|---:|---:|")
        allrows = [v[0] for _, _, v in other] + loose
        for r in sorted(allrows, key=lambda r: r["full_id"]):
            md.append(f"| {r['full_id']} | {fmt_ns(r['median_ns'])} | "
                      f"{fmt_ns(r['lo_ns'])} – {fmt_ns(r['hi_ns'])} | {throughput(r)} |")
        md.append("")
    return compared


def throughput(r):
    t = r.get("throughput")
    if not t or not r["median_ns"]:
        return ""
    if "Elements" in t:
        return fmt_rate(t["Elements"] / (r["median_ns"] / 1e9), "elem/s")
    if "Bytes" in t:
        return fmt_rate(t["Bytes"] / (r["median_ns"] / 1e9), "B/s")
    return ""


md = []
md.append("# Benchmarks\n")
md.append("Generated by `bench/run` (rendered by `bench/render.py` from "
          "`bench/out/results/`); no figure here is typed by hand. Every ratio compares "
          "two figures measured in the same run on the same machine. Absolute times on "
          "this shared 2-core machine drift from run to run; the ratios are what the "
          "goals are judged on.\n")
md.append("## Machine and command\n")
md.append("| | |")
md.append("|---|---|")
for k, label in (("date_utc", "date"), ("nproc", "nproc"), ("cpu", "CPU"), ("mem", "memory"),
                 ("kernel", "kernel"), ("rustc", "rustc"), ("git", "commit"),
                 ("tcpdump", "tcpdump"), ("tshark", "tshark"), ("python", "python")):
    md.append(f"| {label} | {machine.get(k, 'unknown')} |")
md.append(f"| load average (1, 5, 15 min) at start / end | {machine.get('load_start', '?')} / {machine.get('load_end', '?')} |")
md.append(f"| run time | {elapsed} s |")
md.append("")
md.append(f"Reproduce with:\n\n```\n{command}\n```\n")
md.append("Criterion runs with `--warm-up-time 1 --measurement-time 2` (unless `--quick`); "
          "tool timings are CPU time (user + sys, from the kernel's rusage of the process, "
          "microsecond resolution) and peak RSS (`/usr/bin/time`), the best of the timed runs "
          "(3 by default, 2 for tshark), output to `/dev/null`. Several other builds shared "
          "the machine during the run when the load average below is above 2.\n")

SUMMARY_AT = len(md)

# --- tcp-options -------------------------------------------------------------
body = []
tcp = criterion_section("tcp-options", "tcp-options: option iteration, header parse, builder, rewrites", body)
for case, impls in sorted(tcp.items()):
    ref_name, ref = ours_reference(impls)
    if not ref:
        continue
    for name, (r, is_ours) in impls.items():
        if is_ours:
            continue
        ratio = r["median_ns"] / ref["median_ns"]
        low = name.lower()
        if "bare" in low:
            inv = ref["median_ns"] / r["median_ns"]
            goals.append(("tcp-options", f"{case}: within {BARE_MAX_RATIO}x of the bare loop",
                          f"ours / bare = {inv:.2f}x", inv <= BARE_MAX_RATIO))
        else:
            need = ETHERPARSE_MIN_RATIO if "etherparse" in low else 1.0
            what = f"at least {need:.0f}x faster than {name}" if need > 1 else f"faster than {name}"
            goals.append(("tcp-options", f"{case}: {what}",
                          f"{name} / ours = {ratio:.2f}x", ratio >= need if need > 1 else ratio > 1.0))
md_tcp = body


def crate_uses_alloc(src_dir):
    """True/False whether any source file of the crate names `alloc`; None if absent."""
    if not os.path.isdir(src_dir):
        return None
    pat = re.compile(r"extern\s+crate\s+alloc|\balloc::")
    for dirpath, _, files in os.walk(src_dir):
        for f in files:
            if f.endswith(".rs"):
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    if pat.search(fh.read()):
                        return True
    return False


uses = crate_uses_alloc("tcp-options/src")
goals.append(("tcp-options", "option iteration and header parse allocate nothing",
              "not checked" if uses is None else
              ("the crate refers to `alloc`" if uses else
               "no `alloc` anywhere in tcp-options/src: a no_std crate without an allocator cannot allocate"),
              None if uses is None else not uses))

body = []
criterion_section("dscp", "dscp: names and header rewrites", body)
md_dscp = body

def wrr_paired():
    """The wrr bench's own summary (alternating runs of wrr and the reference,
    ratios taken pair by pair): [(mode, queues, ratio)], [(mode, 64/4 ratio)]."""
    text = read_text(os.path.join("logs", "bench-wrr-wrr.out"))
    rows = re.findall(r"^(bytes|packets)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s*$",
                      text, re.M)
    scale = re.findall(r"^(bytes|packets): wrr 64 queues / 4 queues = ([\d.]+)", text, re.M)
    return ([(m, int(q), float(r)) for m, q, r in rows], [(m, float(r)) for m, r in scale])


body = []
criterion_section("wrr", "wrr: enqueue + dequeue per packet", body)
paired_rows, paired_scale = wrr_paired()
# Criterion times each side in its own window, minutes apart on a shared
# machine; the bench's summary alternates the two and takes each pair's
# ratio, so load that comes and goes hits both sides alike. The goals are
# judged on that summary only.
body.append("The goals are judged on the summary the bench prints (medians of per-pair "
            "ratios of alternating runs, shown above the criterion table): criterion times "
            "each side in a separate window, so a change in machine load between the two "
            "windows moves its ratio.\n")
if not paired_rows:
    goals.append(("wrr", "no slower than the VecDeque reference (paired runs)",
                  "the bench printed no summary", None))
for mode, queues, ratio in paired_rows:
    goals.append(("wrr", f"{queues} queues, {mode}: no slower than the VecDeque reference "
                  "(paired runs)", f"wrr / reference = {ratio:.2f}x", ratio <= 1.0))
if not paired_scale:
    goals.append(("wrr", f"64 queues within {WRR_64_VS_4_MAX}x of 4 (paired runs)",
                  "the bench printed no summary", None))
for mode, ratio in paired_scale:
    goals.append(("wrr", f"{mode}: 64 queues within {WRR_64_VS_4_MAX}x of 4 (paired runs)",
                  f"64 / 4 queues = {ratio:.2f}x", ratio <= WRR_64_VS_4_MAX))
md_wrr = body

body = []
criterion_section("bdp", "bdp", body)
md_bdp = body

body = []
criterion_section("examples", "Tools (criterion, library level)", body)
md_examples = body

# --- tools -------------------------------------------------------------------
tools = []
try:
    with open(os.path.join(RES, "tools.jsonl")) as f:
        tools = [json.loads(l) for l in f if l.strip()]
except OSError:
    pass
tool = {t["id"]: t for t in tools}


def best(t):
    if not t or t["status"] != "ok" or not t["runs"]:
        return None
    return min(t["runs"], key=lambda r: r["cpu_s"])


def cap_info(fmt):
    return read_json(f"capture-{fmt}.json")


def tool_row(t, segments, ref_cpu=None):
    b = best(t)
    if b is None:
        status = t["status"] if t else "not available"
        reason = f" ({t.get('reason')})" if t and t.get("reason") else ""
        return f"| {t['label'] if t else '?'} | {status}{reason} | | | | | |"
    cpu = b["cpu_s"]
    rate = segments / cpu if cpu > 0 and segments else None
    ratio = (cpu / ref_cpu) if ref_cpu else None
    lines = t.get("stdout_lines", "")
    return (f"| {t['label']} | {cpu:.3f} s | {b['wall_s']:.2f} s | "
            f"{b['max_rss_kb'] / 1024:.1f} MB | {fmt_rate(rate, 'seg/s')} | {lines} | "
            f"{fmt_ratio(ratio) if ratio else '1.00x (ours)' if ref_cpu is None else 'n/a'} |")


md_tools = []
md_tools.append("## firewall-check dump and analyze against tcpdump and tshark\n")
md_tools.append("Same generated capture for every program (`gen-capture`, package "
                "`tcp-perf-bench` in `bench/`, every packet built by tcp-options' `PacketRepr`: "
                "interleaved IPv4 and IPv6 connections over Ethernet, each with a handshake "
                "carrying MSS, SACK-permitted, timestamps and window scale, data, ACKs with "
                "SACK blocks after losses, and FIN; valid checksums). tshark extracts the same "
                "fields as `dump --json` (frame, time, addresses, ports, flags, seq, ack, "
                "window, DSCP, ECN, option kinds and their values). \"CPU / ours\" divides a "
                "row's CPU time by that of `dump --json` (dump table) or `analyze` (analyze "
                "table): above 1, we are faster by that factor.\n")
CAPTURES = (("s128-pcap", "headers only (snap length 128), pcap"),
            ("s128-pcapng", "headers only (snap length 128), pcapng"),
            ("full-pcap", "full payloads, pcap"))
for fmt, cap_label in CAPTURES:
    info = cap_info(fmt)
    if not info:
        md_tools.append(f"Capture {cap_label}: **not available**.\n")
        continue
    seg = info["segments"]
    md_tools.append(f"### {cap_label}: {seg:,} segments, {info['connections']:,} connections "
                    f"({info['ipv4_segments']:,} IPv4, {info['ipv6_segments']:,} IPv6 segments; "
                    f"at most {info['max_open_connections']} open at once), "
                    f"{info['bytes'] / 1e6:.1f} MB\n")
    for area, ref_id, ids in (
            ("dump", f"dump-json-{fmt}", [f"dump-json-{fmt}", f"dump-text-{fmt}",
                                          f"tcpdump-{fmt}", f"tshark-fields-{fmt}"]),
            ("analyze", f"analyze-text-{fmt}", [f"analyze-text-{fmt}", f"analyze-json-{fmt}",
                                                f"tshark-conv-{fmt}"])):
        md_tools.append(f"**{area}**\n")
        md_tools.append("| program | CPU (user+sys) | wall | peak RSS | segments / CPU s | lines out | CPU / ours |")
        md_tools.append("|---|---:|---:|---:|---:|---:|---:|")
        rb = best(tool.get(ref_id))
        for i in ids:
            t = tool.get(i)
            if t is None:
                continue
            if i == ref_id:
                md_tools.append(tool_row(t, seg, None))
            else:
                md_tools.append(tool_row(t, seg, rb["cpu_s"] if rb else 0))
        md_tools.append("")
        for i in ids:
            t = tool.get(i)
            if t:
                md_tools.append(f"- `{t['command']}`")
        md_tools.append("")
    # goals for this format
    j = best(tool.get(f"dump-json-{fmt}"))
    td = best(tool.get(f"tcpdump-{fmt}"))
    ts = best(tool.get(f"tshark-fields-{fmt}"))
    an = best(tool.get(f"analyze-text-{fmt}"))
    anj = best(tool.get(f"analyze-json-{fmt}"))
    jl = tool.get(f"dump-json-{fmt}", {}).get("stdout_lines")
    if j and jl is not None:
        goals.append(("firewall-check", f"dump --json prints one line per segment ({fmt})",
                      f"{jl:,} lines for {seg:,} segments", jl == seg))
    if j and td:
        r = td["cpu_s"] / j["cpu_s"] if j["cpu_s"] else None
        goals.append(("firewall-check", f"dump --json faster than tcpdump -nn -v, CPU ({fmt})",
                      f"tcpdump / ours = {fmt_ratio(r)}", r is not None and r > TCPDUMP_MIN_RATIO))
    else:
        goals.append(("firewall-check", f"dump --json faster than tcpdump -nn -v, CPU ({fmt})",
                      "not available", None))
    if j and ts:
        r = ts["cpu_s"] / j["cpu_s"] if j["cpu_s"] else None
        goals.append(("firewall-check", f"dump --json at least {TSHARK_MIN_RATIO:.0f}x faster than tshark ({fmt})",
                      f"tshark / ours = {fmt_ratio(r)}", r is not None and r >= TSHARK_MIN_RATIO))
    else:
        goals.append(("firewall-check", f"dump --json at least {TSHARK_MIN_RATIO:.0f}x faster than tshark ({fmt})",
                      "not available", None))
    for lab, a in (("analyze", an), ("analyze --json", anj)):
        if a:
            rate = seg / a["cpu_s"] if a["cpu_s"] else float("inf")
            goals.append(("firewall-check", f"{lab} at least 5 M segments/s, CPU ({fmt})",
                          f"{fmt_rate(rate, 'seg/s')}", rate >= ANALYZE_MIN_SEG_PER_S))
        else:
            goals.append(("firewall-check", f"{lab} at least 5 M segments/s, CPU ({fmt})",
                          "not available", None))

perf_parts = []
for sub in ("analyze", "analyze-many", "dump"):
    text = read_text(f"perf-{sub}.txt")
    if text:
        perf_parts.append(f"`{read_text(f'perf-{sub}.cmd')}` (perf record, symbols above 1.5% of samples):\n")
        perf_parts.append("```\n" + "\n".join(l.strip() for l in text.splitlines()) + "\n```\n")
if perf_parts:
    md_tools.append("### Where the CPU goes (profile of this run's binaries)\n")
    md_tools.extend(perf_parts)

big = read_json("capture-big.json")
md_tools.append("### Memory on a 1 GB capture\n")
if big is None:
    md_tools.append("Not measured in this run (`bench/run --big` measures it, generating the "
                    "1 GB capture the first time).\n")
    goals.append(("firewall-check", f"1 GB capture analysed in under {BIG_MAX_RSS_MB} MB RSS",
                  "not measured (run with --big)", None))
else:
    seg = big["segments"]
    md_tools.append(f"{big['bytes'] / 1e9:.2f} GB pcap, {seg:,} segments, {big['connections']:,} "
                    f"connections, at most {big['max_open_connections']} open at once.\n")
    md_tools.append("| program | CPU (user+sys) | wall | peak RSS | segments / CPU s | lines out | CPU / ours |")
    md_tools.append("|---|---:|---:|---:|---:|---:|---:|")
    b = best(tool.get("big-analyze"))
    for i in ("big-analyze",):
        if tool.get(i):
            md_tools.append(tool_row(tool[i], seg, None if i == "big-analyze" else (b["cpu_s"] if b else 0)))
    md_tools.append("")
    if b:
        mb = b["max_rss_kb"] / 1024
        goals.append(("firewall-check", f"1 GB capture analysed in under {BIG_MAX_RSS_MB} MB RSS",
                      f"{mb:.1f} MB ({b['max_rss_kb'] * 1024 / big['connections']:,.0f} bytes per connection seen)",
                      mb < BIG_MAX_RSS_MB))
        small = best(tool.get("analyze-text-s128-pcap"))
        small_info = cap_info("s128-pcap")
        if small and small_info and small_info["max_open_connections"] == big["max_open_connections"]:
            growth = b["max_rss_kb"] / small["max_rss_kb"]
            goals.append(("firewall-check",
                          "analyze memory bounded by open connections, not capture size: RSS grows "
                          f"under {RSS_GROWTH_MAX}x from the {small_info['bytes'] / 1e6:.0f} MB to the "
                          f"{big['bytes'] / 1e9:.1f} GB capture (both at most {big['max_open_connections']} "
                          "connections open at once)",
                          f"{small['max_rss_kb'] / 1024:.1f} MB -> {mb:.1f} MB ({growth:.1f}x; "
                          f"{small_info['connections']:,} -> {big['connections']:,} connections seen)",
                          growth < RSS_GROWTH_MAX))
    else:
        goals.append(("firewall-check", f"1 GB capture analysed in under {BIG_MAX_RSS_MB} MB RSS",
                      "not available", None))

# --- one-sided analysis anchors (issue 12, section 4) --------------------------
md_tools.append("### analyze --json against the one-sided analysis anchors\n")
md_tools.append("`tcptrace -l` and `tshark -q -z conv,tcp` summarise every connection of a capture, "
                "as `analyze` does (tcptrace with `-n`: without it, it looks up every address "
                "in the DNS and measures the resolver); all three run on the same two captures in this run: the "
                "long-flow capture above (headers only, pcap) and a many-connections one "
                "(`gen-many-conns` of `bench/`: a SYN scan, refused / half-open / unanswered 2:1:1, "
                "about one connection per two segments). \"CPU anchor / ours\" above "
                f"{ANCHOR_MIN_CPU_RATIO:.0f}x and \"RSS ours / anchor\" at most "
                f"{ANCHOR_MAX_RSS_SHARE:.2f} meet the goal.\n")
for cap_id, cap_label, ours_id in (("s128-pcap", "long flows", "analyze-json-s128-pcap"),
                                   ("many-pcap", "many connections", "analyze-json-many-pcap")):
    info = cap_info(cap_id)
    if not info:
        md_tools.append(f"Capture {cap_label}: **not available**.\n")
        continue
    seg = info["segments"]
    md_tools.append(f"**{cap_label}**: {seg:,} segments, {info['connections']:,} connections, "
                    f"{info['bytes'] / 1e6:.1f} MB\n")
    md_tools.append("| program | CPU (user+sys) | wall | peak RSS | segments / CPU s | CPU anchor / ours | RSS ours / anchor |")
    md_tools.append("|---|---:|---:|---:|---:|---:|---:|")
    ours = best(tool.get(ours_id))
    ids = [ours_id, f"tcptrace-{cap_id}", f"tshark-conv-{cap_id}"]
    for i in ids:
        t = tool.get(i)
        b = best(t)
        if b is None:
            status = t["status"] if t else "not available"
            reason = f" ({t.get('reason')})" if t and t.get("reason") else ""
            md_tools.append(f"| {t['label'] if t else i} | {status}{reason} | | | | | |")
            continue
        rate = seg / b["cpu_s"] if b["cpu_s"] else None
        if i == ours_id:
            cpu_r, rss_r = "1.00x (ours)", "1.00 (ours)"
        elif ours:
            cpu_r = fmt_ratio(b["cpu_s"] / ours["cpu_s"]) if ours["cpu_s"] else "n/a"
            rss_r = f"{ours['max_rss_kb'] / b['max_rss_kb']:.2f}" if b["max_rss_kb"] else "n/a"
        else:
            cpu_r = rss_r = "n/a"
        md_tools.append(f"| {t['label']} | {b['cpu_s']:.3f} s | {b['wall_s']:.2f} s | "
                        f"{b['max_rss_kb'] / 1024:.1f} MB | {fmt_rate(rate, 'seg/s')} | {cpu_r} | {rss_r} |")
    md_tools.append("")
    for i in ids:
        t = tool.get(i)
        if t:
            md_tools.append(f"- `{t['command']}`")
    md_tools.append("")
    for anchor_id, anchor_label in ((f"tcptrace-{cap_id}", "tcptrace -n -l"),
                                    (f"tshark-conv-{cap_id}", "tshark -q -z conv,tcp")):
        a = best(tool.get(anchor_id))
        cpu_goal = (f"analyze --json at least {ANCHOR_MIN_CPU_RATIO:.0f}x faster than "
                    f"{anchor_label}, CPU ({cap_label})")
        rss_goal = (f"analyze --json peak RSS at most a quarter of {anchor_label}'s ({cap_label})")
        if ours and a and ours["cpu_s"] and a["max_rss_kb"]:
            r = a["cpu_s"] / ours["cpu_s"]
            goals.append(("firewall-check", cpu_goal, f"{anchor_label} / ours = {fmt_ratio(r)}",
                          r >= ANCHOR_MIN_CPU_RATIO))
            share = ours["max_rss_kb"] / a["max_rss_kb"]
            goals.append(("firewall-check", rss_goal,
                          f"{ours['max_rss_kb'] / 1024:.1f} MB / {a['max_rss_kb'] / 1024:.1f} MB = {share:.2f}",
                          share <= ANCHOR_MAX_RSS_SHARE))
        else:
            goals.append(("firewall-check", cpu_goal, "not available", None))
            goals.append(("firewall-check", rss_goal, "not available", None))
    # What bounds ours on this capture, measured in the same run.
    anchors = [b for b in (best(tool.get(f"tcptrace-{cap_id}")), best(tool.get(f"tshark-conv-{cap_id}"))) if b]
    floor = best(tool.get("analyze-json-empty"))
    bare = best(tool.get(f"bare-read-{cap_id}"))
    if ours and anchors:
        cpu_need = min(a["cpu_s"] for a in anchors) / ANCHOR_MIN_CPU_RATIO
        rss_need = min(a["max_rss_kb"] for a in anchors) * ANCHOR_MAX_RSS_SHARE
        lines = [f"What the goal asks on this capture: at most {cpu_need:.3f} s CPU and "
                 f"{rss_need / 1024:.1f} MB peak RSS (ours: {ours['cpu_s']:.3f} s, "
                 f"{ours['max_rss_kb'] / 1024:.1f} MB)."]
        if bare:
            lines.append(f"Reading the file's bytes alone (`cat`) takes {bare['cpu_s']:.3f} s CPU "
                         f"({bare['cpu_s'] / cpu_need * 100:.0f}% of that CPU budget).")
        if floor:
            lines.append(f"`analyze --json` of a capture with no packet (process start-up, the "
                         f"binary and shared libraries mapped, the buffers) takes "
                         f"{floor['cpu_s']:.3f} s CPU and {floor['max_rss_kb'] / 1024:.1f} MB RSS "
                         f"({floor['max_rss_kb'] / rss_need * 100:.0f}% of that RSS budget).")
        lines.append("The rest is the per-segment and per-connection work: see the profiles "
                     "under \"Where the CPU goes\".")
        md_tools.append(" ".join(lines) + "\n")

# --- qbss-model --------------------------------------------------------------
QBSS_STDERR = re.compile(r"simulated\s+(\d+)\s*s:\s*(\d+)\s+packets,\s*(\d+)\s+events\s+in\s+([0-9.]+)\s*s")


def qbss_counts(name):
    """(simulated seconds, packets, events, simulation seconds) from the tool's
    own stderr report of the same command, or None."""
    m = QBSS_STDERR.search(read_text(f"qbss-{name}.stderr"))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))


md_qbss = ["## qbss-model: simulated packet events per second\n"]
qrows = [t for t in tools if t["area"] == "qbss"]
# engine only, from the bench binary examples/benches/qbss.rs (its own table,
# read by its column names: preset, events, Mevents/s, Mevents/cpu-s, ratio).
qbss_header = None
for line in read_text(os.path.join("logs", "bench-examples-qbss.out")).splitlines():
    cols = line.split()
    if cols and cols[0] == "preset":
        # "wall s" and "anchor ns" are two-word headers
        qbss_header = line.replace("wall s", "wall_s").replace("cpu s", "cpu_s") \
                          .replace("anchor ns", "anchor_ns").split()
        continue
    if not qbss_header or len(cols) != len(qbss_header):
        continue
    row = dict(zip(qbss_header, cols))
    try:
        events = int(row["events"])
        if "Mevents/cpu-s" in row:
            mev, basis = float(row["Mevents/cpu-s"]), "per CPU second"
        else:
            mev, basis = float(row["Mevents/s"]), "per wall second"
    except (KeyError, ValueError):
        continue
    extra = f"; per event {row['ratio']} the time of a bare heap push+pop" if "ratio" in row else ""
    goals.append(("qbss-model", f"{row['preset']} (bench binary, engine only): at least 10 M events/s",
                  f"{mev:.1f} M events {basis} ({events:,} events{extra})",
                  mev * 1e6 >= QBSS_MIN_EVENTS_PER_S))
if not qrows:
    md_qbss.append("**not available**\n")
else:
    md_qbss.append("Whole-process timing of the binary (`--json` output to /dev/null, best of the "
                   "timed runs); packets and events are the counts the tool reports on stderr for "
                   "the same command, with the simulation's own time (engine only). The criterion "
                   "figures (engine only) are in the tools section above.\n")
    md_qbss.append("| scenario | simulated | packets | events | CPU (user+sys) | wall | peak RSS | events / CPU s | engine time (tool) | events / s (tool) |")
    md_qbss.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in qrows:
        name = t["id"][len("qbss-"):]
        b = best(t)
        if b is None:
            md_qbss.append(f"| {name} | {t['status']}" + (f" ({t.get('reason')})" if t.get("reason") else "")
                           + " | | | | | | | | |")
            goals.append(("qbss-model", f"{name}: at least 10 M events/s (whole process)", "not available", None))
            continue
        cnt = qbss_counts(name)
        if cnt is None:
            md_qbss.append(f"| {name} | counts not reported | | | {b['cpu_s']:.3f} s | {b['wall_s']:.2f} s | "
                           f"{b['max_rss_kb'] / 1024:.1f} MB | | | |")
            goals.append(("qbss-model", f"{name}: at least 10 M events/s (whole process)", "not available", None))
            continue
        sim_s, pkts, events, eng_s = cnt
        rate = events / b["cpu_s"] if b["cpu_s"] else None
        eng_rate = events / eng_s if eng_s else None
        md_qbss.append(f"| {name} | {sim_s} s | {pkts:,} | {events:,} | {b['cpu_s']:.3f} s | {b['wall_s']:.2f} s | "
                       f"{b['max_rss_kb'] / 1024:.1f} MB | {fmt_rate(rate, 'ev/s')} | {eng_s:.3f} s | "
                       f"{fmt_rate(eng_rate, 'ev/s')} |")
        goals.append(("qbss-model", f"{name}: at least 10 M events/s (whole process, CPU)",
                      fmt_rate(rate, "events/s"), None if rate is None else rate >= QBSS_MIN_EVENTS_PER_S))
        if name == "transpac":
            goals.append(("qbss-model", "transpac preset (60 s of OC-3) well under 1 s (wall, whole process)",
                          f"{b['wall_s']:.2f} s", b["wall_s"] < QBSS_TRANSPAC_MAX_S))
        if name == "tengig":
            goals.append(("qbss-model", "60 s at 10 Gbit/s under 10 s (wall, whole process)",
                          f"{b['wall_s']:.2f} s", b["wall_s"] < QBSS_10G_MAX_S))
    md_qbss.append("")
    for t in qrows:
        md_qbss.append(f"- `{t['command']}`")
    md_qbss.append("")

# --- summary -----------------------------------------------------------------
summary = ["## Goals\n"]
if not goals:
    summary.append("No goal could be evaluated in this run.\n")
else:
    met = sum(1 for g in goals if g[3] is True)
    miss = sum(1 for g in goals if g[3] is False)
    na = sum(1 for g in goals if g[3] is None)
    summary.append(f"{met} met, {miss} not met, {na} not available.\n")
    summary.append("| area | goal | measured | verdict |")
    summary.append("|---|---|---|---|")
    for area, goal, measured, ok in goals:
        summary.append(f"| {area} | {goal} | {measured} | {verdict(ok)} |")
    summary.append("")

md[SUMMARY_AT:SUMMARY_AT] = summary
for part in (md_tcp, md_dscp, md_wrr, md_bdp, md_examples, md_qbss, md_tools):
    md.extend(part)

print("\n".join(md).rstrip() + "\n")
