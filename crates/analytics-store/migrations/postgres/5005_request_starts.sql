-- How many times a worker has started a request's transcription. A recording that makes its worker
-- die (rather than fail) would otherwise come back with every lease forever: past the job's attempt
-- limit, the next start fails the request instead (docs/transcription.md, Failures).
ALTER TABLE analytics_requests ADD COLUMN starts BIGINT NOT NULL DEFAULT 0;
