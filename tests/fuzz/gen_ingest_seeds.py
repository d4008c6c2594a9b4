#!/usr/bin/env python3
# Seeds of fuzz_ingest: short record streams of each kind the daemon sees,
# in the harness's encoding (an 8-byte header, then struct cs_event records
# whose ts_ns is a delta: (delta << 2) | mode, mode 0 forward within a
# window, 2 back, 3 a jump).  Run from the repository root:
#   python3 tests/fuzz/gen_ingest_seeds.py tests/fuzz/corpus/ingest
import os
import struct
import sys

HDR = struct.Struct("<QIIHHBBH")        # ts, tgid, pid, cpu, node, type, flags, order
SLAB = struct.Struct("<QQQIIQHHhHQII")  # cache ptr site req alloc life acpu anode rnode pad oldc oldt oldb
PAGE = struct.Struct("<QQIIQQII")
KV = struct.Struct("<QqII")
GPU = struct.Struct("<QQQQIHBB")
SIZE = 88
KMALLOC_32 = 1   # the harness folds cache % 8: index 1 is kmalloc-32, 5 to 7 caches


def rec(hdr, body):
    b = HDR.pack(*hdr) + body
    return b + bytes(SIZE - len(b))


def fwd(ns):
    return ns << 2


def jump(ns):
    return (ns << 2) | 3


def slab(ts, tgid, typ, cache, life=0, cpu=0, acpu=0, flags=0, oldc=0, oldt=0):
    return rec((ts, tgid, tgid, cpu, 0, typ, flags, 0),
               SLAB.pack(cache, 0x1000, 0xffffffff81000000 + cache * 16, 24, 32, life,
                         acpu, 0, -1, 0, oldc, oldt, 32))


def page(ts, tgid, typ, ino, order=0, refault=False, rp=0, rep=0):
    return rec((ts, tgid, tgid, 0, 0, typ, 2 if refault else 0, order),
               PAGE.pack(ino, 64, 1, rp, 1000000, 300, 0, rep))


def kv(ts, tgid, op, block, arg=0, h=0):
    return rec((ts, tgid, tgid, block % 2, 0, 5, 0, 0), KV.pack(h, arg, block, op))


def gpu(ts, tgid, op, start=0, end=0, nbytes=0, kind=0):
    return rec((ts, tgid, tgid, 0, 0, 6, 0, 0), GPU.pack(start, end, nbytes, 0x7f0000, 7, kind, op, 0))


def header(window=1, budget=0, alive=1, hist=4):
    return bytes([window, budget, alive, hist, 0, 0, 0, 0])


def churn():
    out = [header()]
    for i in range(60):
        out.append(slab(fwd(1000000), 7, 1, KMALLOC_32))
        out.append(slab(fwd(500000), 7, 2, KMALLOC_32, life=400000, cpu=1, acpu=0))
    return b"".join(out)


def leak():
    out = [header(window=2)]
    for i in range(80):
        out.append(slab(jump(300000000), 9, 1, 5))
        out.append(slab(fwd(1000), 9, 1, 5))
        out.append(slab(fwd(1000), 9, 2, 5, life=500))
    return b"".join(out)


def unseen():
    out = [header(budget=1)]
    for i in range(40):
        out.append(slab(fwd(200000), 11 + i % 3, 1, KMALLOC_32 + (i % 2) * 4, flags=4,
                        oldc=KMALLOC_32, oldt=11))
        out.append(slab(jump(1 << 31), 100 + i, 1, 6))
    return b"".join(out)


def thrash():
    out = [header()]
    for i in range(50):
        out.append(page(fwd(2000000), 21, 3, 5, order=2, refault=True, rp=4, rep=3))
        out.append(page(fwd(1000000), 21, 4, 5, order=2))
    return b"".join(out)


def kvpool():
    out = [header(), kv(fwd(1000), 31, 5, 64, 4096, 0)]
    for i in range(40):
        out.append(kv(fwd(300000), 31, 1, i % 64))
        out.append(kv(fwd(300000), 31, 3, (i + 7) % 64))
        out.append(kv(fwd(300000), 31, 4, (i + 7) % 64, 5))
        out.append(kv(fwd(300000), 31, 2, i % 64))
    return b"".join(out)


def gpus():
    out = [header()]
    for i in range(30):
        out.append(gpu(fwd(1000000), 41, 1 + i % 2, 1000, 51000))
        out.append(gpu(fwd(1000000), 41, 3, 0, 0, 1 << 20, 1 + i % 2))
        out.append(gpu(fwd(1000000), 41, 4, 0, 0, 1 << 16))
        out.append(gpu(fwd(1000000), 41, 5, 0, 0, 1 << 16))
    out.append(gpu(fwd(1000), 41, 6, 0, 0, 3))
    return b"".join(out)


# hostile USDT values the daemon now rejects (issue 11, item 4): kept as
# regression seeds
def kv_pool_4g_blocks():
    return header() + kv(fwd(1000), 31, 5, 0xffffffff, 4096, 0)


def gpu_bytes_overflow():
    return (header() + gpu(fwd(50000000), 41, 4, 0, 0, 0x7000000000000000) +
            gpu(fwd(90000000), 41, 4, 0, 0, 0x7000000000000000) + gpu(fwd(90000000), 41, 1, 0, 1000))


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, fn in [("churn", churn), ("leak", leak), ("unseen", unseen),
                     ("thrash", thrash), ("kvpool", kvpool), ("gpu", gpus),
                     ("regress-kv-pool-4g-blocks", kv_pool_4g_blocks),
                     ("regress-gpu-bytes-overflow", gpu_bytes_overflow)]:
        with open(os.path.join(d, name), "wb") as f:
            f.write(fn())


if __name__ == "__main__":
    main()
