-- How many times each company's callback secret was rotated, and when last (docs/transcription.md,
-- Signatures). The secret itself is derived from the server key, the company and this generation, so
-- nothing secret is stored. A company that never rotated has no row (generation 0). The row outlives a
-- deletion of the company, so that one made again under the same name never signs with a retired secret.
CREATE TABLE analytics_callback_secrets (
    company TEXT PRIMARY KEY,
    generation BIGINT NOT NULL,
    rotated TEXT NOT NULL
);
