-- When a spent code is presented again, the replay is recorded on the code, so an exchange still in
-- flight can see it and revoke what it is about to issue.
ALTER TABLE auth_codes ADD COLUMN replayed_ms BIGINT;
