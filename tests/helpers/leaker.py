# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""leaker.py: tests/helpers/leaker.c in Python, for the test that a
Python program's leak stack names its own function.

    python3 leaker.py SECONDS [KEEP_PER_S]

Every 10 ms on the clock (100 requests a second) it serves a request:
handle_request() opens and closes 10 eventfds, and remember_client()
opens one more that it keeps, for KEEP_PER_S of the 100 requests a second
(default 50), spread.  Prints "pid PID" first and "kept N" at the end.
"""
import os
import sys
import time

kept = []


def remember_client():
    kept.append(os.eventfd(0))


def handle_request():
    for _ in range(10):
        os.close(os.eventfd(0))


def main():
    secs = float(sys.argv[1])
    keep_per_s = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    print("pid", os.getpid(), flush=True)
    start = time.monotonic()
    tick = 0
    while time.monotonic() - start < secs:
        handle_request()
        if (tick + 1) * keep_per_s // 100 > tick * keep_per_s // 100:
            remember_client()
        tick += 1
        pause = start + tick * 0.01 - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    print("kept", len(kept), flush=True)


if __name__ == "__main__":
    main()
