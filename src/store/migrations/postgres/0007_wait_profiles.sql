-- versus results store, schema version 7 (PostgreSQL): see ../0007_wait_profiles.sql.
ALTER TABLE profiles DROP CONSTRAINT profiles_pkey;
ALTER TABLE profiles ADD PRIMARY KEY (run_id, event);
ALTER TABLE profiles DROP CONSTRAINT profiles_hz_check;
ALTER TABLE profiles ADD CONSTRAINT profiles_hz_check CHECK (hz >= 0);
