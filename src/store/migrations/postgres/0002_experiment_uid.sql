-- versus results store, schema version 2 (PostgreSQL): see ../0002_experiment_uid.sql.
ALTER TABLE experiments ADD COLUMN uid TEXT;
UPDATE experiments SET uid = replace(gen_random_uuid()::text, '-', '') WHERE uid IS NULL;
CREATE UNIQUE INDEX experiments_uid ON experiments (uid);
