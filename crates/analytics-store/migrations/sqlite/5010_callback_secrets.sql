-- How many times each company's callback secret was rotated, and when last (docs/transcription.md,
-- Signatures). The secret itself is derived from the server key, the company and this generation, so
-- nothing secret is stored. A company that never rotated has no row (generation 0). A deletion of the
-- company moves it to the next generation with `previous_signs` false, and the row outlives it, so that a
-- company made again under the same name never signs with a secret given out before.
CREATE TABLE analytics_callback_secrets (
    company TEXT PRIMARY KEY,
    generation BIGINT NOT NULL,
    rotated TEXT NOT NULL,
    -- Whether the generation before goes on signing for the overlap (a rotation), or not (a deletion).
    previous_signs INTEGER NOT NULL DEFAULT 1
);
