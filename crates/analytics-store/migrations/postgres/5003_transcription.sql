-- Transcription requests (docs/transcription.md): one row per accepted POST /transcribe, with or without
-- a folder, from acceptance until its result is delivered. What GET /transcribe/<requestid> reports.
CREATE TABLE analytics_requests (
    id              TEXT PRIMARY KEY,
    company         TEXT NOT NULL,
    -- Empty for POST /transcribe, which returns the transcript without storing a call.
    organization    TEXT NOT NULL DEFAULT '',
    folder          TEXT NOT NULL DEFAULT '',
    -- The call the result becomes, for a folder upload.
    call_id         TEXT NOT NULL DEFAULT '',
    filename        TEXT NOT NULL,
    -- json, text, srt or vtt.
    output          TEXT NOT NULL,
    diarize         BOOLEAN NOT NULL,
    -- Caller-supplied metadata of a folder upload (a JSON object), laid over the transcript's own.
    metadata        TEXT NOT NULL DEFAULT '{}',
    -- Object store keys of the uploaded audio and of the rendered result.
    audio_key       TEXT NOT NULL,
    result_key      TEXT NOT NULL DEFAULT '',
    -- queued, transcribing, done or failed.
    state           TEXT NOT NULL,
    error           TEXT NOT NULL DEFAULT '',
    audio_seconds   DOUBLE PRECISION NOT NULL DEFAULT 0,
    -- Empty without a callback.
    callback_url    TEXT NOT NULL DEFAULT '',
    -- none, pending, delivered or cancelled (attempts used up).
    callback_state  TEXT NOT NULL DEFAULT 'none',
    callback_attempts     BIGINT NOT NULL DEFAULT 0,
    callback_max_attempts BIGINT NOT NULL DEFAULT 100,
    callback_error  TEXT NOT NULL DEFAULT '',
    -- UTC, RFC 3339 with milliseconds.
    created         TEXT NOT NULL,
    updated         TEXT NOT NULL
);

CREATE INDEX analytics_requests_by_company ON analytics_requests (company, created);
