-- versus results store, schema version 1.
-- Units: times in seconds since the Unix epoch (UTC), durations in seconds, latencies in microseconds.
-- Never edit a migration that has been released: add a new file instead (see docs/store.md).

CREATE TABLE experiments (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL,
    file            TEXT,                       -- the experiment file as given, if any
    definition      TEXT    NOT NULL,           -- the TOML definition, secrets redacted
    definition_hash TEXT    NOT NULL,           -- 'fnv1a64:<16 hex>' of `definition`
    created_at      INTEGER NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'planned'
                    CHECK (status IN ('planned', 'running', 'done', 'failed', 'interrupted')),
    seed            INTEGER NOT NULL,           -- u64 stored as its two's-complement i64
    host            TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(host)),
    versus_version  TEXT    NOT NULL
);
CREATE INDEX experiments_name ON experiments (name, id);

CREATE TABLE cells (
    id               INTEGER PRIMARY KEY,
    experiment_id    INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    key              TEXT    NOT NULL,          -- stable id of (target, workload, threads)
    target           TEXT    NOT NULL,          -- target label
    build            TEXT,                      -- NULL for external servers
    config           TEXT,                      -- NULL for external servers
    workload         TEXT    NOT NULL,
    threads          INTEGER NOT NULL CHECK (threads > 0),
    workload_options TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(workload_options)),
    UNIQUE (experiment_id, key)
);

-- SHOW GLOBAL VARIABLES snapshots, stored once per distinct content.
CREATE TABLE variable_sets (
    id        INTEGER PRIMARY KEY,
    hash      TEXT NOT NULL,                    -- 'fnv1a64:<16 hex>' of `variables`
    variables TEXT NOT NULL CHECK (json_valid(variables)) -- JSON array of [name, value], sorted by name
);
CREATE INDEX variable_sets_hash ON variable_sets (hash);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    experiment_id   INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    cell_id         INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
    repetition      INTEGER NOT NULL CHECK (repetition > 0),
    order_index     INTEGER NOT NULL CHECK (order_index >= 0),
    status          TEXT    NOT NULL DEFAULT 'planned'
                    CHECK (status IN ('planned', 'running', 'done', 'failed', 'interrupted')),
    error           TEXT,
    started_at      INTEGER,
    finished_at     INTEGER,
    server_version  TEXT,
    command         TEXT CHECK (command IS NULL OR json_valid(command)), -- secrets redacted
    variable_set_id INTEGER REFERENCES variable_sets (id),
    -- summary, set when status = 'done'
    events          INTEGER,
    queries         INTEGER,
    reads           INTEGER,
    writes          INTEGER,
    other           INTEGER,
    errors          INTEGER,
    reconnects      INTEGER,
    tps             REAL,
    qps             REAL,
    latency_min_us  REAL,
    latency_avg_us  REAL,
    latency_max_us  REAL,
    latency_p95_us  REAL,
    latency_p99_us  REAL,
    latency_sum_us  REAL,
    duration_s      REAL,
    fairness_events_avg    REAL,
    fairness_events_stddev REAL,
    fairness_time_avg_s    REAL,
    fairness_time_stddev_s REAL,
    UNIQUE (cell_id, repetition),
    UNIQUE (experiment_id, order_index),
    CHECK (status <> 'done' OR (tps IS NOT NULL AND events IS NOT NULL AND duration_s IS NOT NULL))
);
CREATE INDEX runs_experiment_status ON runs (experiment_id, status);

-- Per-report-interval rates; per-second values unless the name says otherwise.
CREATE TABLE intervals (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t_s            REAL    NOT NULL,            -- end of the interval, seconds since the run started
    threads        INTEGER,
    tps            REAL    NOT NULL,
    qps            REAL    NOT NULL,
    reads_ps       REAL    NOT NULL,
    writes_ps      REAL    NOT NULL,
    other_ps       REAL    NOT NULL,
    latency_p95_us REAL,
    latency_p99_us REAL,
    latency_max_us REAL,
    errors_ps      REAL    NOT NULL,
    reconnects_ps  REAL    NOT NULL,
    PRIMARY KEY (run_id, t_s)
) WITHOUT ROWID;

-- Latency histograms (microseconds), HdrHistogram V2+deflate encoding.
CREATE TABLE histograms (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind     TEXT    NOT NULL,                  -- 'total', 'interval', …
    t_s      REAL,                              -- end of the interval; NULL for whole-run histograms
    encoding TEXT    NOT NULL DEFAULT 'hdr-v2-deflate',
    data     BLOB    NOT NULL
);
CREATE UNIQUE INDEX histograms_key ON histograms (run_id, kind, coalesce(t_s, -1.0));

-- SHOW GLOBAL STATUS counter deltas over the measured part of a run.
CREATE TABLE status_deltas (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name   TEXT    NOT NULL,
    delta  INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

-- Cost per transaction (see docs/store.md for the metric names).
CREATE TABLE efficiency (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    metric TEXT    NOT NULL,
    value  REAL    NOT NULL,
    PRIMARY KEY (run_id, metric)
) WITHOUT ROWID;

-- The variables of each run as rows, for ad-hoc SQL.
CREATE VIEW run_variables AS
    SELECT r.id AS run_id, j.value ->> 0 AS name, j.value ->> 1 AS value
    FROM runs r
    JOIN variable_sets v ON v.id = r.variable_set_id,
         json_each(v.variables) j;
