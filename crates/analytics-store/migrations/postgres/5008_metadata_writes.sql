-- The call's whole metadata as its last change left it (a JSON object of texts), and whether the stored
-- transcript holds it yet; NULL until the first change, when the stored transcript is all there is. A
-- metadata request starts from it without reading the transcript; the metadata worker writes it into the
-- transcript and marks it written (docs/analytics-api.md, Metadata).
ALTER TABLE analytics_calls RENAME COLUMN pending_metadata TO metadata_json;
ALTER TABLE analytics_calls ADD COLUMN metadata_written BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE analytics_calls SET metadata_written = FALSE WHERE metadata_json IS NOT NULL;

-- The metadata worker writing the call's change into its stored transcript, and until when its claim
-- holds (milliseconds since the epoch). The worker claims the calls of its batch in one short statement,
-- writes their transcripts holding no lock, then marks written only what its claim still holds and
-- nothing changed since; a deletion takes the claim for good before it removes the objects. Two workers
-- never write one call's transcript at once.
ALTER TABLE analytics_calls ADD COLUMN metadata_writer TEXT;
ALTER TABLE analytics_calls ADD COLUMN metadata_claimed_until BIGINT;
