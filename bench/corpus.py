#!/usr/bin/python3
"""Calibrate the labels on a corpus of ordinary workloads.

  sudo bench/corpus.py [NAME...]      (all by default; -h lists them)
  CORPUS_DAEMON_ARGS="--sample 1" sudo bench/corpus.py ...   (other daemon options)

Each workload runs beside a fresh cachescoped (system-wide, 100 ms
windows, CSV) and is scored over windows:

  recall     responsible vectors labelled as expected / responsible
             vectors (a responsible vector: a responsible key of one of the
             workload's own processes, found by walking /proc while it runs;
             not a family of young processes, not another process of the
             same name; for a file, any process reading it), counted once the rule could have fired (the first
             `grace` seconds of the pattern are not scored: a leak is old
             only after a second, and needs 2 s of rise, or 8 s where its
             frees are never seen; thrash needs a second of refaults);
  first      seconds from the pattern's first vector (its responsible
             key's first traffic) to the first vector labelled as expected;
  precision  of all anomalous vectors of the run (every process, the
             background included), those that are the expected label on a
             responsible key; keys that share the pattern's objects (the
             dentry of a leaked file) are allowed, not counted either way.

  changes    behaviour changes the daemon logged in the run, of any key
             (cachescope changes; not scored).

Workloads with no anomaly must have no anomalous vector at all.  The
output is one table (bench/calibration.md quotes it) and one CSV per
workload in bench/calibration/corpus-<name>.csv when --keep is given,
the daemon's log beside it (corpus-<name>.log).
"""
import csv
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("CS_BUILD", os.path.join(ROOT, "build"))
DATA = "/var/tmp/cs-corpus"

NGINX_CONF = """worker_processes 2;
worker_rlimit_nofile 65536;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p;
 fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
 server {{ listen 127.0.0.1:18932; root {d}; }} }}
"""

MEMCG = ("if [ -e /sys/fs/cgroup/cgroup.controllers ]; then cg=/sys/fs/cgroup/cs-corpus-$$; "
         "echo +memory > /sys/fs/cgroup/cgroup.subtree_control; mkdir $cg; echo 16M > $cg/memory.max; "
         "else cg=/sys/fs/cgroup/memory/cs-corpus-$$; mkdir $cg; echo 16M > $cg/memory.limit_in_bytes; fi; ")

SQLITE_DB = ("sqlite3 {d}/big.db \"CREATE TABLE t(b BLOB); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
             "SELECT x+1 FROM c WHERE x < 16000) INSERT INTO t SELECT randomblob(4000) FROM c;\"; sync; ")
SQLITE_LOOP = ("end=\\$((\\$(date +%s) + 10)); while [ \\$(date +%s) -lt \\$end ]; do "
               "sqlite3 {d}/big.db 'PRAGMA mmap_size=268435456; SELECT sum(length(b)) FROM t;' "
               ">/dev/null; done")
PG = "/usr/lib/postgresql/15/bin"

# name: (seconds of daemon, shell command, expected label or None,
#        responsible (key glob, comm glob) pairs, allowed key globs, grace s)
CORPUS = {
    # client and server pinned to the two CPUs (stress-ng does not pin):
    # every connection's request sock is made where the SYN arrives and
    # freed where accept() runs, on the other CPU, by the other process:
    # the I/O between two programs, not false sharing
    "stress-sock": (14, "stress-ng --sock 1 --timeout 10 & sleep 0.5; i=0; "
                    "for p in $(pgrep -f stress-ng-sock); do taskset -p -c $((i % 2)) $p >/dev/null; "
                    "i=$((i + 1)); done; wait", None, [], [], 0),
    "stress-udp": (14, "stress-ng --udp 1 --timeout 10", None, [], [], 0),
    "stress-fork": (14, "stress-ng --fork 1 --timeout 10", None, [], [], 0),
    "stress-dentry": (14, "stress-ng --dentry 1 --timeout 10", None, [], [], 0),
    "stress-vm": (14, "stress-ng --vm 1 --vm-bytes 256M --timeout 10", None, [], [], 0),
    "nginx-wrk": (15, "nginx -c {d}/nginx.conf -p {d} & n=$!; sleep 1; "
                  "wrk -t2 -c50 -d10s http://127.0.0.1:18932/ >/dev/null; kill $n; wait $n",
                  None, [], [], 0),
    # the same nginx made to forget 1 in 20 connections (LD_PRELOAD of
    # tests/helpers/leakclose.so), each request on a connection of its own
    "nginx-leak": (15, "LEAKCLOSE_EVERY=20 LD_PRELOAD=" + B + "/tests/helpers/leakclose.so "
                   "nginx -c {d}/nginx.conf -p {d} & n=$!; sleep 1; "
                   "wrk -t2 -c20 -d10s -H 'Connection: close' http://127.0.0.1:18932/ >/dev/null; "
                   "kill $n; wait $n",
                   # allowed, not scored: the TCP socks, made in softirq in
                   # whichever process runs then (wrk's, often); socket
                   # inodes, freed after an RCU grace period (lazy RCU: a
                   # median lifetime of 6 s, too long to call old here);
                   # the epoll entries of the forgotten sockets (eppoll_entry
                   # shares anon_vma_chain's cache) and the data queued on
                   # them (__alloc_skb's 512-byte buffers, in the merged
                   # cache pool_workqueue names)
                   "leak", [("filp", "nginx")],
                   ["dentry", "lsm_*", "kmalloc-*", "skbuff_*", "eventpoll_*", "TCP",
                    "request_sock_TCP", "sock_inode_cache", "ep_head", "anon_vma_chain",
                    "pool_workqueue"], 3.0),
    "fork-loop": (14, "sh -c 'end=$(($(date +%s) + 10)); while [ $(date +%s) -lt $end ]; do /bin/true; done'",
                  None, [], [], 0),
    "compile-after-drop": (22, "sync; echo 3 > /proc/sys/vm/drop_caches; "
                           "for i in 1 2 3; do gcc -O2 -c " + ROOT + "/daemon/window.c -I" + ROOT +
                           "/bpf -I" + B + " -o {d}/w.o; gcc -O2 -c " + ROOT + "/cluster/dbscan.c -o {d}/d.o; done",
                           None, [], [], 0),
    # a parallel build of this project (clang for the BPF object, gcc for
    # the rest): many short compilers writing new files
    "parallel-build": (24, "make -s -C " + ROOT + " -j2 OUTPUT={d}/b {d}/b/cachescoped {d}/b/cachescope "
                       ">/dev/null 2>&1", None, [], [], 0),
    "cyclic-memcg": (14, "head -c 48M /dev/urandom > {d}/cyc.dat; sync; "
                     "dd if={d}/cyc.dat iflag=nocache count=0 2>/dev/null; " + MEMCG +
                     "sh -c \"echo \\$\\$ > $cg/cgroup.procs; i=0; while [ \\$i -lt 60 ]; do "
                     "cat {d}/cyc.dat > /dev/null; i=\\$((i + 1)); done\"; rmdir $cg",
                     "thrash", [("file:*", "cat")], ["file:*"], 1.5),
    # sqlite (Debian's sqlite3) scanning a 64 MiB database through mmap
    # (PRAGMA mmap_size), a new process a query, in a 16 MiB memory
    # cgroup: the file's pages evicted and faulted back, with memory
    # stalls; the same without the limit: warm, nothing
    "sqlite-mmap-memcg": (18, SQLITE_DB + "dd if={d}/big.db iflag=nocache count=0 2>/dev/null; " + MEMCG +
                          "sh -c \"echo \\$\\$ > $cg/cgroup.procs; " + SQLITE_LOOP + "\"; rmdir $cg",
                          "thrash", [("file:*big.db", "sqlite3")], ["file:*"], 1.5),
    "sqlite-mmap": (18, SQLITE_DB + "sh -c \"" + SQLITE_LOOP + "\"", None, [], [], 0),
    # ordinary servers with data files, as they come
    "redis-benchmark": (16, "redis-server --port 18933 --dir {d} --save '1 1' --appendonly yes "
                        "--daemonize no >/dev/null & sleep 1; "
                        "redis-benchmark -p 18933 -q -n 300000 -P 8 -r 100000 -t set,get,lpush,lpop >/dev/null; "
                        "redis-cli -p 18933 shutdown nosave >/dev/null; wait", None, [], [], 0),
    "postgres-pgbench": (30, "chmod 0755 {d}; mkdir {d}/pg; chown postgres {d}/pg; "
                         "su postgres -s /bin/sh -c '" + PG + "/initdb -D {d}/pg >/dev/null && " + PG +
                         "/pg_ctl -D {d}/pg -o \"-p 18934 -k {d}/pg\" -w start >/dev/null && "
                         "pgbench -h {d}/pg -p 18934 -i -s 4 postgres >/dev/null 2>&1 && "
                         "pgbench -h {d}/pg -p 18934 -c 4 -T 12 postgres >/dev/null 2>&1; " + PG +
                         "/pg_ctl -D {d}/pg -m fast stop >/dev/null'", None, [], [], 0),
    "shell-fd-leak": (16, "bash -c 'for i in $(seq 1200); do exec {{fd}}</dev/null; sleep 0.01; done'",
                      "leak", [("filp", "bash")], ["lsm_file_cache", "kmalloc-*"], 10),
    # the shape of issue 23's slow case: ~1000 balanced opens a second and
    # 60 leaked a second
    "fd-leak-60-in-1000": (14, B + "/tests/helpers/fdchurn 100 100 --keep 6 --period-ms 100",
                           "leak", [("filp", "fdchurn"), ("dentry", "fdchurn")],
                           ["lsm_file_cache", "kmalloc-*"], 2.0),
    "fd-leak-in-churn": (14, B + "/tests/helpers/fdchurn 100 100 --keep 5 --period-ms 100",
                         "leak", [("filp", "fdchurn"), ("dentry", "fdchurn")],
                         ["lsm_file_cache", "kmalloc-*"], 3.5),
    "pingpong": (10, B + "/tests/helpers/pingpong 6 0 1", "false_sharing",
                 [("skbuff_head_cache", "pingpong")], ["kmalloc-*"], 0.5),
    # the same, its second side a process of its own: every skb freed on
    # the other CPU by the other program
    "pingpong-procs": (10, B + "/tests/helpers/pingpong 6 0 1 --procs", None, [], [], 0),
    # kvref, the embedded workload, one scenario at a time (daemon-driven)
    "kvref-normal": (16, "", None, [], [], 0),
    # the pool's blocks swapped out and back in; the swap file's page-cache
    # refaults are kvref's own fadvise drops with no memory stall: not
    # thrash where the kernel has PSI, allowed either way
    "kvref-thrash": (16, "", "thrash", [("kv-pool", "kvref")], [], 2.0),
    "kvref-false_sharing": (16, "", "false_sharing", [("skbuff_head_cache", "kvref")],
                            ["kmalloc-*", "skbuff_*"], 2.0),
    # kvref leaks fds from its first request: a rise the kernel's count
    # cannot confirm counts only after the process's first 5 s, and must
    # then last 2 s (leak_min_warmup_s, leak_min_rise_s); its first step
    # comes when the first leaked fds turn a second old: 1 + 5 + 2 s from
    # the key's first event, which comes up to a second before its first
    # vector (a window needs traffic enough for one)
    "kvref-leak": (16, "", "leak", [("filp", "kvref"), ("kv-pool", "kvref")],
                   ["dentry", "lsm_file_cache", "kmalloc-*"], 9.0),
}


def run(name, keep):
    secs, cmd, label, resp, allowed, grace = CORPUS[name]
    d = tempfile.mkdtemp(prefix="cs-corpus-", dir="/var/tmp")
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(d=d))
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("x" * 4096)
    out = os.path.join(d, "cs.csv")
    extra = ["--workload", name[6:]] if name.startswith("kvref-") else []
    # CORPUS_DAEMON_ARGS="--sample 1": the same corpus under other settings
    extra += os.environ.get("CORPUS_DAEMON_ARGS", "").split()
    log = open(os.path.join(d, "daemon.log"), "w")
    daemon = subprocess.Popen([B + "/cachescoped", "--duration", str(secs), "--csv", out,
                               "--socket", "none", "--top", "0"] + extra,
                              stdout=subprocess.DEVNULL, stderr=log, text=True)
    time.sleep(1.5)   # attached (the daemon logs nothing before it traces)
    w = subprocess.Popen(["sh", "-c", cmd.format(d=d) or "true"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    tree = {w.pid}
    while daemon.poll() is None:
        tree |= descendants(w.pid)
        time.sleep(0.1)
    if w.poll() is None:
        os.killpg(w.pid, signal.SIGKILL)
        w.wait()
    log.close()
    # behaviour changes the daemon told (any key of the host's)
    with open(os.path.join(d, "daemon.log")) as f:
        changes = sum(1 for line in f if line.startswith("cachescoped: change: "))
    rows = list(csv.DictReader(open(out)))
    if keep:
        shutil.copy(out, os.path.join(ROOT, "bench", "calibration", "corpus-%s.csv" % name))
        shutil.copy(os.path.join(d, "daemon.log"),
                    os.path.join(ROOT, "bench", "calibration", "corpus-%s.log" % name))
    shutil.rmtree(d, ignore_errors=True)
    # the responsible processes: the workload's own (kvref: driven by the
    # daemon, scope "workload"), not every process of the same name
    mine = ((lambda r: r["scope"] == "workload") if extra[:1] == ["--workload"]
            else (lambda r: r["tgid"] != "" and int(r["tgid"]) in tree))
    s = score(rows, label, resp, allowed, grace, mine)
    s["changes"] = changes
    return s


def descendants(root):
    """Processes now running under root (root itself included)."""
    parent = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    parent[int(p)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out = set()
    for p in parent:
        q, seen = p, 0
        while q > 1 and seen < 64:
            if q == root:
                out.add(p)
                break
            q, seen = parent.get(q, 0), seen + 1
    return out


def matches(r, key, comm):
    if key.startswith("file:"):
        ok = r["domain"] == "page" and fnmatch.fnmatch(r["file"], key[5:])
    else:
        ok = fnmatch.fnmatch(r["key"], key)
    return ok and fnmatch.fnmatch(r["comm"], comm)


def score(rows, label, resp, allowed, grace, mine):
    vec = [r for r in rows if r["label"]]
    anomalous = [r for r in vec if r["label"] != "normal"]
    # a family row folds many young processes: none of them is the
    # pattern's long-lived process, so it is never responsible for an
    # object key; a file is the workload's own, whoever reads it (a shell
    # loop of cat is many short processes reading one file)
    resp_rows = [r for r in vec if any(matches(r, k, c) and
                                       (k.startswith("file:") or
                                        (mine(r) and r["key_kind"] == "process"))
                                       for k, c in resp)]
    # the grace runs from the pattern's first vector (a shell loop of cat
    # is many short processes reading one file)
    start = min((float(r["ts"]) for r in resp_rows), default=0)
    scored = [r for r in resp_rows if float(r["ts"]) - start >= grace]
    hit = sum(r["label"] == label for r in scored)
    resp_ids = {id(r) for r in resp_rows}

    # "file:GLOB": a page-cache file of that name; in a memory cgroup's
    # squeeze the other files its processes read thrash too (the shell's
    # date, its libraries): the same pattern, allowed, not scored
    def is_allowed(r):
        return any(r["domain"] == "page" and fnmatch.fnmatch(r["file"], a[5:]) if a.startswith("file:")
                   else fnmatch.fnmatch(r["key"], a) for a in allowed) and r["label"] == label

    false = [r for r in anomalous if id(r) not in resp_ids and not is_allowed(r)]
    false += [r for r in resp_rows if r["label"] not in ("normal", label)]
    tp = sum(r["label"] == label for r in resp_rows)
    # how soon: the first vector labelled as expected, from the pattern's
    # first vector (its responsible key's first traffic)
    first = min((float(r["ts"]) for r in resp_rows if r["label"] == label), default=None)
    return {
        "first_s": first - start if first is not None else None,
        "vectors": len(vec),
        "anomalous": len(anomalous),
        "scored": len(scored),
        "recall": hit / len(scored) if scored else None,
        "precision": tp / (tp + len(false)) if label and tp + len(false) else None,
        "false": len(false),
        "first_false": false[0]["reason"][:140] if false else "",
    }


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__ + "\nworkloads: " + " ".join(CORPUS))
        return 0
    keep = "--keep" in sys.argv
    if os.geteuid():
        print("corpus.py: needs root (cachescoped loads BPF programs)", file=sys.stderr)
        return 1
    for a in args:
        if a not in CORPUS:
            print("corpus.py: no workload %s (have: %s)" % (a, " ".join(CORPUS)), file=sys.stderr)
            return 2
    print("| workload | truth | vectors | anomalous | recall | precision | first label | unexpected anomalies | changes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    bad = 0
    for name in args or CORPUS:
        s = run(name, keep)
        label = CORPUS[name][2] or "none"
        rec = "%.2f (%d)" % (s["recall"], s["scored"]) if s["recall"] is not None else "—"
        prec = "%.2f" % s["precision"] if s["precision"] is not None else "—"
        ok = s["false"] == 0 and (label == "none" or (s["recall"] or 0) >= 0.95)
        bad += not ok
        first = "%.1f s" % s["first_s"] if s["first_s"] is not None else "—"
        print("| %s | %s | %d | %d | %s | %s | %s | %d %s | %d |" % (name, label, s["vectors"], s["anomalous"],
              rec, prec, first, s["false"], s["first_false"], s["changes"]), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
