#!/usr/bin/env python3
"""Copy criterion results written after STAMP anywhere under SEARCH_DIR into DEST.

Some benches choose their own criterion output directory instead of
CRITERION_HOME; this finds every `<dir>/new/{benchmark,estimates}.json`
newer than the stamp file and copies the pair to DEST/<directory_name>/new/,
where directory_name is the one criterion records in benchmark.json.

Only directories whose path below SEARCH_DIR names PACKAGE are searched (a
bench's own output directory is named after its package, e.g.
`target/tmp/criterion-tcp-options`), so results that other processes write
under the shared target directory at the same time are not picked up.

Usage: collect_criterion.py SEARCH_DIR STAMP DEST PACKAGE
"""

import json
import os
import shutil
import sys


def main():
    search, stamp, dest, package = sys.argv[1:5]
    since = os.path.getmtime(stamp)
    dest_abs = os.path.abspath(dest)
    copied = 0
    for dirpath, dirnames, filenames in os.walk(search):
        if os.path.abspath(dirpath).startswith(dest_abs):
            continue
        if os.path.basename(dirpath) != "new":
            continue
        if package not in os.path.relpath(dirpath, search):
            continue
        if "estimates.json" not in filenames or "benchmark.json" not in filenames:
            continue
        est = os.path.join(dirpath, "estimates.json")
        if os.path.getmtime(est) < since:
            continue
        try:
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                name = json.load(f)["directory_name"]
        except (OSError, ValueError, KeyError):
            continue
        out = os.path.join(dest, name, "new")
        if os.path.exists(os.path.join(out, "estimates.json")):
            continue  # already there (written through CRITERION_HOME)
        os.makedirs(out, exist_ok=True)
        shutil.copy2(est, out)
        shutil.copy2(os.path.join(dirpath, "benchmark.json"), out)
        copied += 1
    if copied:
        print(f"    collected {copied} criterion results from {search}", file=sys.stderr)


if __name__ == "__main__":
    main()
