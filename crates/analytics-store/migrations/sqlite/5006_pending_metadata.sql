-- A metadata change not yet written into the call's stored transcript: the call's whole metadata as a
-- JSON object of texts, or NULL when the stored transcript is up to date. A change commits it here with
-- the message that has a worker write it into the transcript and set it back to NULL
-- (docs/analytics-api.md, Metadata); until then it is what the call's metadata is.
ALTER TABLE analytics_calls ADD COLUMN pending_metadata TEXT;
