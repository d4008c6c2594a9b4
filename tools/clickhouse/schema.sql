-- The fleet store of cachescoped's rows: one table, every host's CSV
-- (`--csv` files, `cachescope export`) loaded as it is.  The columns are
-- the CSV's, in the CSV's order (daemon/csvschema.c is the one list;
-- tests/test_rowcsv.c checks this file against it), so that clickhouse's
-- CSVWithNames takes a file whole, old ClickHouse releases (which match
-- columns by position) as well as new ones.  Load (docs/fleet.md):
--
--   clickhouse-client --multiquery < schema.sql
--   cachescope export --csv rows.csv
--   clickhouse-client --query 'INSERT INTO cachescope.rows FORMAT CSVWithNames' < rows.csv
--
-- A row with no feature vector (a key's window the rules did not label)
-- has label '' and zeros in its vector columns (ops_per_s ... refault_share);
-- tgid is 0 for a family or others key (key_kind says which); cluster is
-- text: '' (not clustered yet), '-1' (noise) or the cluster's id.

CREATE DATABASE IF NOT EXISTS cachescope;

CREATE TABLE IF NOT EXISTS cachescope.rows
(
    ts Float64,                  -- window start, seconds since the epoch
    window UInt64,
    window_ms UInt32,
    domain String,               -- slab, page, kv, gpu
    key String,                  -- cache, dev:ino or pool
    file String,
    tgid UInt32,
    comm String,
    scope String,                -- system, workload
    allocs UInt64,
    frees UInt64,
    bytes_req UInt64,
    bytes_alloc UInt64,
    bytes_freed UInt64,
    live_objs Int64,
    live_bytes Int64,
    lifetime_p50_ns UInt64,
    same_cpu_frees UInt64,
    remote_frees UInt64,
    cross_numa UInt64,
    size_entropy Float64,
    same_size_share Float64,
    top_site_share Float64,
    page_adds UInt64,
    page_dels UInt64,
    refaults UInt64,
    refault_pages UInt64,
    refault_dist_p50 UInt64,
    ops_per_s Float64,
    f_freq Float64,
    f_hot Float64,
    f_entropy Float64,
    f_locality Float64,
    f_numa Float64,
    growth_per_s Float64,
    grew_windows UInt32,
    free_ratio Float64,
    refault_share Float64,
    cluster String,
    label String,                -- '', normal, thrash, false_sharing, leak
    reason String,
    gpu_kernels UInt64,
    gpu_kernel_ns UInt64,
    gpu_copy_in_bytes UInt64,
    gpu_copy_out_bytes UInt64,
    tgid_gpu_kernel_ns UInt64,
    tgid_gpu_kv_kernel_ns UInt64,
    tgid_gpu_copy_bytes UInt64,
    unseen_frees UInt64,
    repeat_pages UInt64,
    old_objs Int64,
    age_ms UInt64,
    hot_site String,
    key_kind String,             -- process, family, others
    window_drops UInt64,
    sample UInt32,
    host String,
    cgroup String,
    container String,
    own_remote_frees UInt64,
    stack String                 -- slab leak rows: the code that allocated the old objects
)
ENGINE = MergeTree()
PARTITION BY toYYYYMMDD(toDateTime(toUInt32(ts)))
ORDER BY (host, domain, key, ts);
