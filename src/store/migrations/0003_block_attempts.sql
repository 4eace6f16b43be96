-- versus results store, schema version 3: blocks run on a fleet. A block (one repetition of every
-- cell) is measured by attempts; each records the host it ran on, its class, fingerprint and canary.
-- The runs of a block belong to its latest attempt; the one attempt that finished them is canonical.
CREATE TABLE block_attempts (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
    block         INTEGER NOT NULL CHECK (block >= 0),
    attempt       INTEGER NOT NULL CHECK (attempt > 0),
    status        TEXT    NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'done', 'failed', 'rejected', 'abandoned')),
    host          TEXT,
    host_class    TEXT,
    fingerprint   TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(fingerprint)),
    canary        TEXT    CHECK (canary IS NULL OR json_valid(canary)),
    error         TEXT,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    UNIQUE (experiment_id, block, attempt)
);
CREATE INDEX block_attempts_class ON block_attempts (host_class, status);
ALTER TABLE runs ADD COLUMN attempt_id INTEGER REFERENCES block_attempts (id);
