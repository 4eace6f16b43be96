-- versus results store, schema version 6 (PostgreSQL): see ../0006_profiles.sql.
CREATE TABLE profiles (
    run_id       BIGINT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    event        TEXT   NOT NULL,
    hz           BIGINT NOT NULL CHECK (hz > 0),
    samples      BIGINT NOT NULL CHECK (samples >= 0),
    transactions BIGINT NOT NULL CHECK (transactions >= 0),
    note         TEXT,
    folded       BYTEA  NOT NULL
);
