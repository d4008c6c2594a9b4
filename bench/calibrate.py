#!/usr/bin/env python3
"""Calibrate the labelling rules on induced behaviour.

Runs cachescoped (as root) beside each helper that makes one pattern happen
for a physical reason, plus a run of ordinary work and system background:

  leak           fdchurn --leak: eventfds opened and never closed
  thrash         refault: a file re-read after posix_fadvise(DONTNEED)
  false_sharing  pingpong: skbs allocated on one CPU, freed on the other
  normal         fdchurn (fds closed again) + a warm re-read + background

For every run it keeps the vectors (rows with a label) in
bench/calibration/<scenario>.csv and prints, for the responsible keys and
for every other key, the evidence each rule reads (10th, 50th and 90th
percentile, and the extreme that matters) and how the vectors were
labelled.  The thresholds in daemon/classify.c sit between the two groups;
the margins are in bench/calibration.md.

  sudo bench/calibrate.py            # from the repository root, after make
"""
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

B = os.environ.get("CS_BUILD", "build")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calibration")

SCENARIOS = [
    ("leak", 9, ["{B}/tests/helpers/fdchurn 50 40 --leak"],
     ["filp", "dentry", "lsm_file_cache", "kmalloc-*"]),
    ("thrash", 6, ["sh -c 'echo pid $$; exec {B}/tests/helpers/refault {D}/thrash.dat 8192 12'"],
     ["<file>"]),
    ("false_sharing", 6, ["{B}/tests/helpers/pingpong 3 0 1"], ["skbuff_head_cache", "kmalloc-*"]),
    ("normal", 7, ["{B}/tests/helpers/fdchurn 200 20",
                   "{B}/tests/helpers/refault {D}/warm.dat 4096 5 --keep"], []),
]

EVIDENCE = ["grew_windows", "growth_per_s", "free_ratio", "refault_share", "refault_pages",
            "f_locality", "same_size_share", "remote_frees", "ops_per_s", "lifetime_p50_ns"]


def run(name, secs, cmds, tmp):
    sock = os.path.join(tmp, name + ".sock")
    out_csv = os.path.join(tmp, name + ".csv")
    d = subprocess.Popen([f"{B}/cachescoped", "--duration", str(secs), "--csv", out_csv,
                          "--socket", sock, "--top", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    pids, key = [], None
    for c in cmds:
        text = subprocess.run(c.format(B=B, D=tmp), shell=True, capture_output=True,
                              text=True, check=True).stdout
        m = re.search(r"pid (\d+)", text)
        if m:
            pids.append(m.group(1))
        m = re.search(r"key (\S+)", text)
        if m and key is None:
            key = m.group(1)
    d.wait()
    with open(out_csv) as f:
        rows = [r for r in csv.DictReader(f) if r["label"]]
    return rows, pids, key


def pct(vals, q):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(q * len(vals)))] if vals else float("nan")


def describe(rows, title):
    print(f"  {title}: {len(rows)} vectors, labels " +
          ", ".join(f"{l} {sum(1 for r in rows if r['label'] == l)}"
                    for l in ("normal", "thrash", "false_sharing", "leak")))
    for ev in EVIDENCE:
        vals = [float(r[ev]) for r in rows if r[ev] != ""]
        if vals:
            print(f"    {ev:16s} p10 {pct(vals, .1):12.4g}  p50 {pct(vals, .5):12.4g}  "
                  f"p90 {pct(vals, .9):12.4g}  min {min(vals):12.4g}  max {max(vals):12.4g}")


def main():
    if os.geteuid():
        sys.exit("calibrate.py: needs root")
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        for name, secs, cmds, keys in SCENARIOS:
            rows, pids, key = run(name, secs, cmds, tmp)
            keys = [key if k == "<file>" else k for k in keys]
            mine = [r for r in rows if r["tgid"] in pids[:1] and any(
                r["key"] == k or (k.endswith("*") and r["key"].startswith(k[:-1])) for k in keys)]
            rest = [r for r in rows if r not in mine]
            print(f"== {name}: responsible keys {keys or '(none)'} of pid {pids[:1]}")
            if mine:
                describe(mine, "responsible")
            describe(rest, "all other keys")
            with open(os.path.join(OUT, name + ".csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=["group"] + list(rows[0].keys()) if rows else [])
                w.writeheader()
                for r in rows:
                    w.writerow({"group": "responsible" if r in mine else "other", **r})


if __name__ == "__main__":
    main()
