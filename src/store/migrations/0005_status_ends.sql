-- versus results store, schema version 5: the values of the gauges and log positions of
-- SHOW GLOBAL STATUS at the end of a run's measured time (dirty pages, checkpoint age, LSNs), which a
-- delta cannot give. Runs stored before this version have none.
CREATE TABLE status_ends (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name   TEXT    NOT NULL,
    value  INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
