-- The analytics service's tables: companies as analytics knows them, their organizations and folders,
-- and the calls of the folders with the metadata fields their folder configures. A company, organization
-- or folder being deleted keeps its row (status 'deleting') until the deletion job has removed what it holds.

CREATE TABLE analytics_companies (
    company      TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    created      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'OK',
    -- Calls the company held when its deletion began, for `deleting (NN%)`.
    delete_total BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE analytics_organizations (
    company      TEXT NOT NULL REFERENCES analytics_companies (company),
    organization TEXT NOT NULL,
    timezone     TEXT NOT NULL,
    created      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'OK',
    delete_total BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (company, organization)
);

CREATE TABLE analytics_folders (
    company      TEXT NOT NULL,
    organization TEXT NOT NULL,
    folder       TEXT NOT NULL,
    -- The folder record's settings as JSON (everything but `created` and `status`).
    settings     TEXT NOT NULL,
    created      TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'OK',
    delete_total BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (company, organization, folder),
    FOREIGN KEY (company, organization) REFERENCES analytics_organizations (company, organization)
);

CREATE TABLE analytics_calls (
    id            TEXT PRIMARY KEY,
    company       TEXT NOT NULL,
    organization  TEXT NOT NULL,
    folder        TEXT NOT NULL,
    request_id    TEXT NOT NULL,
    -- Local time in the organization's time zone, YYYY-MM-DDTHH:MM:SS.
    datetime      TEXT NOT NULL,
    -- UTC, RFC 3339 with milliseconds; strictly increasing per call.
    last_modified TEXT NOT NULL,
    filename      TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    audio_seconds DOUBLE PRECISION NOT NULL,
    FOREIGN KEY (company, organization, folder)
        REFERENCES analytics_folders (company, organization, folder)
);

CREATE INDEX analytics_calls_by_folder ON analytics_calls (company, organization, folder, datetime);

-- Only the fields the call's folder configures (`custom_meta`); every field is in the stored transcript.
CREATE TABLE analytics_call_metadata (
    call_id TEXT NOT NULL REFERENCES analytics_calls (id) ON DELETE CASCADE,
    field   TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (call_id, field)
);
