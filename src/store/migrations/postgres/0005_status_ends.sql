-- versus results store, schema version 5 (PostgreSQL): see ../0005_status_ends.sql.
CREATE TABLE status_ends (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name   TEXT   NOT NULL,
    value  BIGINT NOT NULL,
    PRIMARY KEY (run_id, name)
);
