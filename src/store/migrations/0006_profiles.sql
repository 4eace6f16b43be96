-- versus results store, schema version 6: the server's on-CPU profile of a run (`profile = true`):
-- folded stacks with the CPU nanoseconds sampled in each, gzip-compressed as one blob per run, and
-- why a run that asked for a profile has none (`note`, with an empty `folded`).
CREATE TABLE profiles (
    run_id       INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    event        TEXT    NOT NULL,
    hz           INTEGER NOT NULL CHECK (hz > 0),
    samples      INTEGER NOT NULL CHECK (samples >= 0),
    transactions INTEGER NOT NULL CHECK (transactions >= 0),
    note         TEXT,
    folded       BLOB    NOT NULL
);
