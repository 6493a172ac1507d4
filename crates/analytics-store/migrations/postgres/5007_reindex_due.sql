-- Whether a reindex message for the call is on its way and has not been taken yet. A metadata change that
-- touches a configured field publishes one only when none is due, and the reindex worker clears the mark
-- before it reads the call, so a burst of changes to a call costs one index write, not one per request
-- (docs/analytics-api.md, Metadata).
ALTER TABLE analytics_calls ADD COLUMN reindex_due BOOLEAN NOT NULL DEFAULT FALSE;
