-- versus results store, schema version 2: every experiment gets a unique id that survives copying it
-- to another store (`versus store copy` matches experiments by it, so copying twice adds nothing).
ALTER TABLE experiments ADD COLUMN uid TEXT;
UPDATE experiments SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
CREATE UNIQUE INDEX experiments_uid ON experiments (uid);
