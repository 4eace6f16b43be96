-- versus results store, schema version 8: each replica of a topology target, sampled each second of a
-- run (heartbeat lag, the server's Seconds_Behind, transactions applied a second). t_s is seconds since
-- the run's load started, as in intervals. Runs without replicas, and runs stored before this version,
-- have none.
CREATE TABLE replica_seconds (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    replica        TEXT    NOT NULL,
    t_s            REAL    NOT NULL,
    lag_ms         REAL,
    seconds_behind INTEGER,
    applied_ps     REAL,
    PRIMARY KEY (run_id, replica, t_s)
) WITHOUT ROWID;
