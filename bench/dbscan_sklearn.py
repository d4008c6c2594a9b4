#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""sklearn's side of bench/dbscan.sh (needs Debian's python3-sklearn).

  dbscan_sklearn.py gen N OUT.f64
      N points in [0, 1]^5, float64, row-major: 20 Gaussian blobs (sigma
      0.02 to 0.04, uneven sizes) and 10 % uniform noise; fixed seed.
  dbscan_sklearn.py fit POINTS.f64 EPS MIN_PTS LABELS.i32 CORE.u8
      DBSCAN(eps, min_samples, algorithm='kd_tree'); prints
      "seconds=S maxrss_kib=K clusters=C", S the wall time of fit alone,
      K this process's peak resident set (interpreter and input included).
  dbscan_sklearn.py compare LABELS_A CORE_A LABELS_B CORE_B
      prints whether the core flags are equal, the noise sets are equal and
      the clusters of core points are the same up to renumbering; exits 1
      when any is not.
"""
import resource
import sys
import time

import numpy as np

DIM = 5


def gen(n, out):
    layout = np.random.default_rng(12345)
    centres = layout.uniform(0.15, 0.85, (20, DIM))
    sigma = layout.uniform(0.02, 0.04, 20)
    weight = layout.uniform(0.5, 2.0, 20)
    rng = np.random.default_rng(n)
    nnoise = n // 10
    blob = rng.choice(20, n - nnoise, p=weight / weight.sum())
    pts = centres[blob] + rng.normal(size=(n - nnoise, DIM)) * sigma[blob, None]
    pts = np.vstack([pts, rng.uniform(0, 1, (nnoise, DIM))])
    np.clip(pts, 0, 1, out=pts)
    pts[rng.permutation(n)].astype(np.float64).tofile(out)


def fit(path, eps, min_pts, labels_out, core_out):
    from sklearn.cluster import DBSCAN

    pts = np.fromfile(path, dtype=np.float64).reshape(-1, DIM)
    pts.sum()       # first touch of the pages outside the timing, as in C
    t = time.monotonic()
    db = DBSCAN(eps=eps, min_samples=min_pts, algorithm="kd_tree").fit(pts)
    t = time.monotonic() - t
    core = np.zeros(len(pts), dtype=np.uint8)
    core[db.core_sample_indices_] = 1
    db.labels_.astype(np.int32).tofile(labels_out)
    core.tofile(core_out)
    print("seconds=%.6f maxrss_kib=%d clusters=%d"
          % (t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
             db.labels_.max() + 1))


def same_partition(a, b):
    """a one-to-one map between the labels a and b over the same points"""
    pairs = np.unique(np.stack([a, b]), axis=1)
    return (len(pairs[0]) == len(np.unique(a)) == len(np.unique(b)))


def compare(la, ca, lb, cb):
    la, lb = np.fromfile(la, np.int32), np.fromfile(lb, np.int32)
    ca, cb = np.fromfile(ca, np.uint8), np.fromfile(cb, np.uint8)
    ok_core = len(ca) == len(cb) and bool((ca == cb).all())
    ok_noise = len(la) == len(lb) and bool(((la < 0) == (lb < 0)).all())
    core = ca.astype(bool)
    ok_part = ok_core and same_partition(la[core], lb[core])
    print("core flags %s, noise %s, core partition %s"
          % ("equal" if ok_core else "DIFFER",
             "equal" if ok_noise else "DIFFERS",
             "same" if ok_part else "DIFFERS"))
    return 0 if ok_core and ok_noise and ok_part else 1


def main(argv):
    if len(argv) == 4 and argv[1] == "gen":
        gen(int(argv[2]), argv[3])
        return 0
    if len(argv) == 7 and argv[1] == "fit":
        fit(argv[2], float(argv[3]), int(argv[4]), argv[5], argv[6])
        return 0
    if len(argv) == 6 and argv[1] == "compare":
        return compare(*argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
