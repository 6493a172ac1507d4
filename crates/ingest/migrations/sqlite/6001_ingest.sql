-- The ingestion service's tables (versions 6001 to 6999): projects, their events, and the insert ids
-- remembered for deduplication. Times are epoch milliseconds.

CREATE TABLE ingest_projects (
    app_key TEXT PRIMARY KEY,
    company TEXT NOT NULL,
    name TEXT NOT NULL,
    server_time BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TEXT NOT NULL,
    CONSTRAINT ingest_projects_company_name UNIQUE (company, name)
);

CREATE TABLE ingest_events (
    seq INTEGER PRIMARY KEY,
    app_key TEXT NOT NULL,
    event_time INTEGER NOT NULL,
    event_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    insert_id TEXT,
    session_dua TEXT,
    ip TEXT,
    browser TEXT,
    browser_version TEXT,
    os TEXT,
    device_type TEXT,
    city TEXT,
    state TEXT,
    country TEXT,
    properties TEXT NOT NULL
);

CREATE INDEX ingest_events_by_project_time ON ingest_events (app_key, event_time, seq);

CREATE TABLE ingest_insert_ids (
    app_key TEXT NOT NULL,
    insert_id TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (app_key, insert_id)
);

CREATE INDEX ingest_insert_ids_by_age ON ingest_insert_ids (seen_at);
