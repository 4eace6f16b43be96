-- versus results store, schema version 8 (PostgreSQL): see ../0008_replica_seconds.sql.
CREATE TABLE replica_seconds (
    run_id         BIGINT           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    replica        TEXT             NOT NULL,
    t_s            DOUBLE PRECISION NOT NULL,
    lag_ms         DOUBLE PRECISION,
    seconds_behind BIGINT,
    applied_ps     DOUBLE PRECISION,
    PRIMARY KEY (run_id, replica, t_s)
);
