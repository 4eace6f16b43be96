-- versus results store, schema version 4: noise bands measured by `versus calibrate` (an A/A
-- experiment), per host class, workload and thread count. compare, run and explain use the latest one
-- for the host class and workload of what they compare instead of the fixed default band.
CREATE TABLE noise_calibrations (
    id            INTEGER PRIMARY KEY,
    host_class    TEXT    NOT NULL,
    host          TEXT    NOT NULL DEFAULT '',
    workload      TEXT    NOT NULL,
    threads       INTEGER NOT NULL CHECK (threads > 0),
    metric        TEXT    NOT NULL,
    repetitions   INTEGER NOT NULL CHECK (repetitions > 0),
    cv            REAL    NOT NULL CHECK (cv >= 0),
    band          REAL    NOT NULL CHECK (band >= 0),
    confidence    REAL    NOT NULL CHECK (confidence > 0 AND confidence < 1),
    experiment_id INTEGER REFERENCES experiments (id) ON DELETE SET NULL,
    target        TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
);
CREATE INDEX noise_calibrations_key ON noise_calibrations (host_class, workload, threads, metric, created_at);
