-- /appstats over every folder of an organization reads the category rollup rows of an application in
-- day, agent and category order and sums the folders' rows of each key as they come
-- (docs/scoring.md, Reads): this index gives them in that order, without a sort. One folder's read
-- uses the primary key. Only key columns, which an update of the sums never changes.
CREATE INDEX analytics_daily_categories_by_app
    ON analytics_daily_categories (company, organization, app, day, agent_id, category);
