-- versus results store, schema version 7: a run may keep two profiles, its on-CPU one (`cpu-clock`)
-- and, with `profile_waits = true`, its off-CPU one (`sched:sched_switch`: off-CPU nanoseconds per
-- stack). The key becomes (run, event), and an off-CPU profile, which samples at no rate, has hz = 0.
CREATE TABLE profiles_v7 (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    event        TEXT    NOT NULL,
    hz           INTEGER NOT NULL CHECK (hz >= 0),
    samples      INTEGER NOT NULL CHECK (samples >= 0),
    transactions INTEGER NOT NULL CHECK (transactions >= 0),
    note         TEXT,
    folded       BLOB    NOT NULL,
    PRIMARY KEY (run_id, event)
);
INSERT INTO profiles_v7 (run_id, event, hz, samples, transactions, note, folded)
    SELECT run_id, event, hz, samples, transactions, note, folded FROM profiles;
DROP TABLE profiles;
ALTER TABLE profiles_v7 RENAME TO profiles;
