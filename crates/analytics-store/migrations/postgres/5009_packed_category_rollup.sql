-- The category rollup, one row per folder, application, local day and agent holding every category's
-- sums in one value (docs/scoring.md, Rollups; the format is in store/scorecards.rs): /appstats reads
-- one row per agent and day instead of one per category. A score transaction locks and reads its rows,
-- adds its changes to them and writes them back.
CREATE TABLE analytics_daily_scorecards (
    company      TEXT NOT NULL,
    organization TEXT NOT NULL,
    folder       TEXT NOT NULL,
    app          TEXT NOT NULL,
    day          TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    sums         BYTEA NOT NULL,
    PRIMARY KEY (company, organization, folder, app, day, agent_id)
);

-- /appstats over every folder of an organization, in day and agent order (as 5004 for the rows it
-- replaces).
CREATE INDEX analytics_daily_scorecards_by_app
    ON analytics_daily_scorecards (company, organization, app, day, agent_id);

-- analytics_daily_categories is no longer written. Its rows are moved into the new table when the
-- service starts (store::move_category_rollups, in batches, each deleting the rows it adds), and the
-- empty table stays until a later migration drops it.
DROP INDEX analytics_daily_categories_by_app;
