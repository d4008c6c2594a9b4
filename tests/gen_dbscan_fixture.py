#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Write tests/data/dbscan_5d.csv: sklearn's DBSCAN on fixed 5-D points.

Run with Debian's python3-sklearn:  /usr/bin/python3 tests/gen_dbscan_fixture.py

The points lie in [0, 1]^5: Gaussian blobs of different densities, a
filament, uniform noise, exact duplicates, and points on a lattice of step
eps / 2.  eps is a power of two and the lattice coordinates are multiples of
eps / 2, so squared distances of lattice points are exact and many pairs sit
exactly eps apart: one step of 2 or four steps of 1 give exactly eps^2, so
ties on eps decide neighbour counts there.  tests/test_dbscan.c checks that
cluster/dbscan.c finds the same core points, the same noise and the same
partition of core points.

Output, deterministic for a given numpy and sklearn: a comment line with eps
and min_pts, a header line, then per point x0..x4 (repr, so they read back
exactly), sklearn's label and is_core (0/1).
"""
import os
import sys

import numpy as np
import sklearn
from sklearn.cluster import DBSCAN

EPS = 0.0625            # 2^-4: exact in binary, so lattice ties are exact
MIN_PTS = 8
SEED = 20240611
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "data", "dbscan_5d.csv")


def make_points(rng):
    parts = []
    # blobs: (centre, sigma, count), from tight to diffuse
    for centre, sigma, count in [
            ((0.25, 0.25, 0.25, 0.25, 0.25), 0.015, 700),
            ((0.70, 0.30, 0.60, 0.40, 0.50), 0.030, 900),
            ((0.40, 0.75, 0.30, 0.70, 0.60), 0.045, 800),
            ((0.75, 0.75, 0.75, 0.25, 0.20), 0.060, 400)]:
        parts.append(rng.normal(centre, sigma, (count, 5)))
    # a filament: a line across the cube, jittered a little
    t = rng.uniform(0, 1, 450)[:, None]
    a = np.array([0.10, 0.90, 0.10, 0.50, 0.90])
    b = np.array([0.90, 0.10, 0.50, 0.90, 0.10])
    parts.append(a + t * (b - a) + rng.normal(0, 0.006, (450, 5)))
    # uniform noise
    parts.append(rng.uniform(0, 1, (450, 5)))
    # a sparse lattice of step eps / 2 in a corner: ties decide counts
    step = EPS / 2
    idx = np.stack(np.meshgrid(*[np.arange(6)] * 3 + [np.arange(3)] * 2,
                               indexing="ij"), -1).reshape(-1, 5)
    keep = rng.uniform(0, 1, len(idx)) < 0.22
    parts.append(np.array([0.03125, 0.5, 0.8125, 0.0625, 0.625]) +
                 idx[keep] * step)
    pts = np.clip(np.vstack(parts), 0, 1)
    # blob points snapped to the lattice: more exact ties inside clusters
    snap = rng.choice(len(pts), 250, replace=False)
    pts[snap] = np.round(pts[snap] / step) * step
    # exact duplicates
    dup = rng.choice(len(pts), 120, replace=False)
    pts = np.vstack([pts, pts[dup]])
    return pts[rng.permutation(len(pts))]


def main():
    rng = np.random.default_rng(SEED)
    pts = make_points(rng)
    db = DBSCAN(eps=EPS, min_samples=MIN_PTS, algorithm="kd_tree").fit(pts)
    core = np.zeros(len(pts), dtype=int)
    core[db.core_sample_indices_] = 1

    d2 = ((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)
    ties = int((np.triu(d2 == EPS * EPS, 1)).sum())
    flips = int((((d2 < EPS * EPS).sum(1) >= MIN_PTS) != core).sum())

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("# eps=%r min_pts=%d n=%d: sklearn %s "
                "DBSCAN(algorithm='kd_tree'), tests/gen_dbscan_fixture.py\n"
                % (EPS, MIN_PTS, len(pts), sklearn.__version__))
        f.write("x0,x1,x2,x3,x4,label,is_core\n")
        for p, lab, c in zip(pts, db.labels_, core):
            f.write(",".join(repr(float(v)) for v in p) +
                    ",%d,%d\n" % (lab, c))
    print("%s: %d points, %d clusters, %d core, %d noise; %d pairs exactly "
          "eps apart decide the core flag of %d points"
          % (OUT, len(pts), db.labels_.max() + 1, core.sum(),
             (db.labels_ < 0).sum(), ties, flips), file=sys.stderr)


if __name__ == "__main__":
    main()
