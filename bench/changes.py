#!/usr/bin/python3
"""How often behaviour changes are told, on steady load and on load that
switches.

  sudo bench/changes.py [SECONDS]      (steady runs of SECONDS, default 180)
  CHANGES_KEEP=DIR sudo bench/changes.py ...   (each run's CSV in DIR)

Each workload runs beside a fresh cachescoped (system-wide, 100 ms windows)
and the daemon's "change:" notices are counted: on steady load every one
is a false alarm (reported per hour), on a switching load the workload's
own keys should change at the switches (each notice listed with its time
from the switch).  Nothing else should run meanwhile.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.environ.get("CS_BUILD", os.path.join(ROOT, "build"))

NGINX_CONF = """worker_processes 2;
worker_rlimit_nofile 65536;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; client_body_temp_path {d}/b; proxy_temp_path {d}/p;
 fastcgi_temp_path {d}/f; uwsgi_temp_path {d}/u; scgi_temp_path {d}/s;
 server {{ listen 127.0.0.1:18935; root {d}; }} }}
"""
URL = "http://127.0.0.1:18935/"


def workloads(secs):
    n = "nginx -c {d}/nginx.conf -p {d} & n=$!; sleep 1; "
    # name: (daemon seconds, shell command, switch times from the command's
    # start (s), daemon options)
    return {
        "idle": (secs, "sleep %d" % secs, [], []),
        "nginx-wrk-steady": (secs, n + "wrk -t2 -c50 -d%ds %s >/dev/null; kill $n; wait $n"
                             % (secs - 4, URL), [], []),
        "redis-steady": (secs, "redis-server --port 18936 --save '' --daemonize no >/dev/null & sleep 1; "
                         "timeout %d redis-benchmark -p 18936 -q -l -c 20 -t set,get -r 10000 >/dev/null; "
                         "redis-cli -p 18936 shutdown nosave >/dev/null; wait" % (secs - 4), [], []),
        # the request mix changes: keep-alive requests of a small page for
        # 30 s, then a connection per request for 30 s
        "nginx-mix-switch": (66, n + "wrk -t2 -c20 -d30s %s >/dev/null; "
                             "wrk -t2 -c20 -d30s -H 'Connection: close' %s >/dev/null; kill $n; wait $n"
                             % (URL, URL), [31.0], []),
        # kvref's mixed run: normal, thrash, false_sharing, leak, 15 s each
        "kvref-mixed": (62, "", [], ["--workload", "mixed"]),
    }


LINE = re.compile(r"^cachescoped: change: \S+ \S+ of (pid (\d+)|young processes|other processes) ?\(?([^)]*)")


def run(name, secs, cmd, switches, extra):
    d = tempfile.mkdtemp(prefix="cs-changes-", dir="/var/tmp")
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(d=d))
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("x" * 4096)
    logp = os.path.join(d, "daemon.log")
    log = open(logp, "w")
    # CHANGES_KEEP=DIR: each run's CSV kept as DIR/NAME.csv
    keep = os.environ.get("CHANGES_KEEP")
    if keep:
        os.makedirs(keep, exist_ok=True)
        extra = extra + ["--csv", os.path.join(keep, name + ".csv")]
    daemon = subprocess.Popen([B + "/cachescoped", "--duration", str(secs), "--socket", "none",
                               "--top", "0"] + extra, stdout=subprocess.DEVNULL, stderr=log)
    time.sleep(1.5)
    t0 = time.monotonic()
    events = []
    w = subprocess.Popen(["sh", "-c", (cmd or "true").format(d=d)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    # the daemon's log is read as it grows, so each change has its time
    pos = 0
    while True:
        done = daemon.poll() is not None
        with open(logp) as f:
            f.seek(pos)
            chunk = f.read()
        keep = chunk.rsplit("\n", 1)[0] + "\n" if "\n" in chunk else ""
        pos += len(keep)
        for line in keep.splitlines():
            if line.startswith("cachescoped: workload: phase ") and "starts at" in line:
                switches.append(time.monotonic() - t0)
            if line.startswith("cachescoped: change: "):
                events.append((time.monotonic() - t0, line[len("cachescoped: change: "):]))
        if done:
            break
        time.sleep(0.2)
    if w.poll() is None:
        os.killpg(w.pid, 9)
        w.wait()
    log.close()
    shutil.rmtree(d, ignore_errors=True)
    return events, switches


def main():
    secs = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 180
    if os.geteuid():
        print("changes.py: needs root (cachescoped loads BPF programs)", file=sys.stderr)
        return 1
    print("| workload | seconds | changes | per hour | at (s from the run's start; switches) |")
    print("| --- | --- | --- | --- | --- |")
    details = []
    for name, (s, cmd, sw, extra) in workloads(secs).items():
        events, switches = run(name, s, cmd, list(sw), extra)
        at = ", ".join("%.0f" % t for t, _ in events) or "—"
        if switches:
            at += "; switches " + ", ".join("%.0f" % t for t in switches)
        print("| %s | %d | %d | %.0f | %s |" % (name, s, len(events), len(events) * 3600.0 / s, at),
              flush=True)
        details += ["%s +%.1f s: %s" % (name, t, line[:200]) for t, line in events]
    print()
    for line in details:
        print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
