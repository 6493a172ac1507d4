-- Applications, the scores of calls and the daily rollups the statistics read (docs/scoring.md).

-- A company's applications: a tree of categories whose leaves hold phrases, kept as the normalized JSON
-- of the PUT body. `revision` is a digest of that JSON: scores name the revision they came from.
CREATE TABLE analytics_apps (
    company    TEXT NOT NULL REFERENCES analytics_companies (company),
    name       TEXT NOT NULL,
    definition TEXT NOT NULL,
    revision   TEXT NOT NULL,
    updated    TEXT NOT NULL,
    PRIMARY KEY (company, name)
);

-- The figures of a scored call (docs/figures.md). A call with this row is counted in
-- analytics_daily_agents; `scoring` names the applications and revisions its rows in
-- analytics_call_scores came from (docs/scoring.md, Fingerprint), so a call already up to date is skipped.
CREATE TABLE analytics_call_facts (
    call_id        TEXT PRIMARY KEY REFERENCES analytics_calls (id) ON DELETE CASCADE,
    company        TEXT NOT NULL,
    organization   TEXT NOT NULL,
    folder         TEXT NOT NULL,
    -- The call's local date (YYYY-MM-DD) and time, as its `datetime`.
    day            TEXT NOT NULL,
    datetime       TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    duration       DOUBLE PRECISION NOT NULL,
    silence        DOUBLE PRECISION NOT NULL,
    words          BIGINT NOT NULL,
    agent_talk     DOUBLE PRECISION NOT NULL,
    client_talk    DOUBLE PRECISION NOT NULL,
    -- 'positive', 'negative', 'improving', 'worsening', or NULL (neutral, or the speaker said nothing).
    agent_emotion  TEXT,
    client_emotion TEXT,
    scoring        TEXT NOT NULL
);

CREATE INDEX analytics_call_facts_by_day ON analytics_call_facts (company, organization, folder, day);

-- A call's score in every category of every application of its folder; category '' is the application
-- as a whole, a deeper category is its path with '.' between levels.
CREATE TABLE analytics_call_scores (
    call_id  TEXT NOT NULL REFERENCES analytics_calls (id) ON DELETE CASCADE,
    app      TEXT NOT NULL,
    category TEXT NOT NULL,
    score    BIGINT NOT NULL,
    hit      BIGINT NOT NULL,
    coverage DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (call_id, app, category)
);

-- Per folder, local day and agent: sums over the calls counted (/stats, and `duration` and `silence` of
-- /appstats). A row whose `calls` fell to 0 counts as absent.
CREATE TABLE analytics_daily_agents (
    company          TEXT NOT NULL,
    organization     TEXT NOT NULL,
    folder           TEXT NOT NULL,
    day              TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    calls            BIGINT NOT NULL,
    duration         DOUBLE PRECISION NOT NULL,
    silence          DOUBLE PRECISION NOT NULL,
    words            BIGINT NOT NULL,
    agent_talk       DOUBLE PRECISION NOT NULL,
    client_talk      DOUBLE PRECISION NOT NULL,
    agent_positive   BIGINT NOT NULL,
    agent_negative   BIGINT NOT NULL,
    agent_improving  BIGINT NOT NULL,
    agent_worsening  BIGINT NOT NULL,
    client_positive  BIGINT NOT NULL,
    client_negative  BIGINT NOT NULL,
    client_improving BIGINT NOT NULL,
    client_worsening BIGINT NOT NULL,
    PRIMARY KEY (company, organization, folder, day, agent_id)
);

-- Per folder, application, local day, agent and category ('' = the application as a whole): sums over
-- the calls the application scored (/appstats).
CREATE TABLE analytics_daily_categories (
    company      TEXT NOT NULL,
    organization TEXT NOT NULL,
    folder       TEXT NOT NULL,
    app          TEXT NOT NULL,
    day          TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    category     TEXT NOT NULL,
    calls        BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    coverage     DOUBLE PRECISION NOT NULL,
    score        BIGINT NOT NULL,
    duration     DOUBLE PRECISION NOT NULL,
    silence      DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (company, organization, folder, app, day, agent_id, category)
);
