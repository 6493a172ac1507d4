//! The statements of scoring (docs/scoring.md), written once for both databases like `sql.rs`: a call's figures
//! and score rows, and the rollups, changed by one multi-row upsert per chunk of rows that adds the
//! deltas to what the rows hold.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rollups::{CategoryDayDelta, CategoryDayKey, RollupChanges, RollupTotals};
use crate::rows::{CallFactsRow, CallRow, CallScoreRow, FolderRow, ScoringProgress};
use crate::scorecards;
use crate::sql::{placeholders, tuples, Statements, ROWS_PER_STATEMENT};

/// Rows per statement (well inside both databases' limits on bound values).
const CHUNK: usize = 100;

/// The key of a packed category rollup row, from a category change's key.
fn scorecard_key(key: &CategoryDayKey) -> [&str; 6] {
    [
        &key.company,
        &key.organization,
        &key.folder,
        &key.app,
        &key.day,
        &key.agent_id,
    ]
}

/// The changes to one packed row: its key, and each category's change, in byte order of the paths.
type DayChanges<'c> = ([&'c str; 6], Vec<(&'c str, &'c CategoryDayDelta)>);

/// A packed category rollup row as a statement returns it: its key, then its sums.
type ScorecardRow = (String, String, String, String, String, String, Vec<u8>);

/// A row of the category rollup as it was before it was packed (one row per category).
#[derive(sqlx::FromRow)]
pub(crate) struct FormerCategoryRow {
    #[sqlx(flatten)]
    key: CategoryDayKey,
    #[sqlx(flatten)]
    sums: CategoryDayDelta,
}

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> &'q [u8]: Binds<'q, D>,
    for<'q> f64: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<&'q str>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    (bool,): Reads<D>,
    (i64, i64): Reads<D>,
    (String, String, i64, i64, i64): Reads<D>,
    (String, Vec<u8>): Reads<D>,
    CallFactsRow: Reads<D>,
    CallRow: Reads<D>,
    CallScoreRow: Reads<D>,
    FolderRow: Reads<D>,
    FormerCategoryRow: Reads<D>,
    ScorecardRow: Reads<D>,
{
    pub(crate) async fn apply_rollups(
        c: &mut D::Connection,
        changes: &RollupChanges,
    ) -> Result<(), StoreError> {
        let agents: Vec<_> = changes.agents.iter().collect();
        for chunk in agents.chunks(CHUNK) {
            let sql = format!(
                "INSERT INTO analytics_daily_agents (company, organization, folder, day, agent_id, calls, \
                 duration, silence, words, agent_talk, client_talk, agent_positive, agent_negative, \
                 agent_improving, agent_worsening, client_positive, client_negative, client_improving, \
                 client_worsening) VALUES {values} ON CONFLICT (company, organization, folder, day, agent_id) DO UPDATE SET \
                 calls = analytics_daily_agents.calls + excluded.calls, \
                 duration = analytics_daily_agents.duration + excluded.duration, \
                 silence = analytics_daily_agents.silence + excluded.silence, \
                 words = analytics_daily_agents.words + excluded.words, \
                 agent_talk = analytics_daily_agents.agent_talk + excluded.agent_talk, \
                 client_talk = analytics_daily_agents.client_talk + excluded.client_talk, \
                 agent_positive = analytics_daily_agents.agent_positive + excluded.agent_positive, \
                 agent_negative = analytics_daily_agents.agent_negative + excluded.agent_negative, \
                 agent_improving = analytics_daily_agents.agent_improving + excluded.agent_improving, \
                 agent_worsening = analytics_daily_agents.agent_worsening + excluded.agent_worsening, \
                 client_positive = analytics_daily_agents.client_positive + excluded.client_positive, \
                 client_negative = analytics_daily_agents.client_negative + excluded.client_negative, \
                 client_improving = analytics_daily_agents.client_improving + excluded.client_improving, \
                 client_worsening = analytics_daily_agents.client_worsening + excluded.client_worsening",
                values = tuples(chunk.len(), 19)
            );
            let mut query = sqlx::query::<D>(&sql);
            for (key, d) in chunk {
                query = query
                    .bind(key.company.as_str())
                    .bind(key.organization.as_str())
                    .bind(key.folder.as_str())
                    .bind(key.day.as_str())
                    .bind(key.agent_id.as_str())
                    .bind(d.calls)
                    .bind(d.duration)
                    .bind(d.silence)
                    .bind(d.words)
                    .bind(d.agent_talk)
                    .bind(d.client_talk);
                for n in d.emotions {
                    query = query.bind(n);
                }
            }
            query.execute(&mut *c).await?;
        }
        Self::apply_scorecards(c, changes).await
    }

    /// Adds the category changes to the packed rows of their agents' days (scorecards.rs): per chunk of
    /// rows, one statement creates the missing ones and locks and returns them all (an update to the value
    /// it holds), the changes are added here, and one statement writes the new values. In key order, as the
    /// rest of the rollups, so two transactions lock the same rows in the same order.
    async fn apply_scorecards(
        c: &mut D::Connection,
        changes: &RollupChanges,
    ) -> Result<(), StoreError> {
        let mut days: Vec<DayChanges> = Vec::new();
        for (key, delta) in &changes.categories {
            let row = scorecard_key(key);
            match days.last_mut() {
                Some((last, list)) if *last == row => list.push((&key.category, delta)),
                _ => days.push((row, vec![(&key.category, delta)])),
            }
        }
        const COLUMNS: &str = "company, organization, folder, app, day, agent_id";
        for chunk in days.chunks(CHUNK) {
            let sql = format!(
                "INSERT INTO analytics_daily_scorecards ({COLUMNS}, sums) VALUES {} \
                 ON CONFLICT ({COLUMNS}) DO UPDATE SET sums = analytics_daily_scorecards.sums \
                 RETURNING {COLUMNS}, sums",
                tuples(chunk.len(), 7)
            );
            let mut query = sqlx::query_as::<D, ScorecardRow>(&sql);
            for (key, _) in chunk {
                for part in key {
                    query = query.bind(*part);
                }
                query = query.bind(scorecards::EMPTY);
            }
            let current = query.fetch_all(&mut *c).await?;
            let mut values = Vec::with_capacity(chunk.len());
            for (key, list) in chunk {
                // The statement returns every row it was given: were one missing, writing the changes
                // alone would wipe its sums, so that fails the transaction instead.
                let now = current
                    .iter()
                    .find(|(a, b, c, d, e, f, _)| *key == [&**a, b, c, d, e, f])
                    .ok_or_else(|| {
                        StoreError::Database(sqlx::Error::Protocol(
                            "the upsert of a packed category rollup row returned no row for it"
                                .into(),
                        ))
                    })?;
                values.push(scorecards::merged(&now.6, list)?);
            }
            let sql = format!(
                "INSERT INTO analytics_daily_scorecards ({COLUMNS}, sums) VALUES {} \
                 ON CONFLICT ({COLUMNS}) DO UPDATE SET sums = excluded.sums",
                tuples(chunk.len(), 7)
            );
            let mut query = sqlx::query::<D>(&sql);
            for ((key, _), value) in chunk.iter().zip(&values) {
                for part in key {
                    query = query.bind(*part);
                }
                query = query.bind(value.as_slice());
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    pub(crate) async fn calls_facts(
        c: &mut D::Connection,
        call_ids: &[&str],
    ) -> Result<Vec<CallFactsRow>, StoreError> {
        Self::select_in(c, call_ids, |list| {
            format!(
                "SELECT call_id, company, organization, folder, day, datetime, agent_id, duration, \
                 silence, words, agent_talk, client_talk, agent_emotion, client_emotion, scoring \
                 FROM analytics_call_facts WHERE call_id IN ({list}) ORDER BY call_id"
            )
        })
        .await
    }

    pub(crate) async fn insert_calls_facts(
        c: &mut D::Connection,
        rows: &[CallFactsRow],
    ) -> Result<(), StoreError> {
        for chunk in rows.chunks(CHUNK) {
            let sql = format!(
                "INSERT INTO analytics_call_facts (call_id, company, organization, folder, day, \
                 datetime, agent_id, duration, silence, words, agent_talk, client_talk, agent_emotion, \
                 client_emotion, scoring) VALUES {}",
                tuples(chunk.len(), 15)
            );
            let mut query = sqlx::query::<D>(&sql);
            for row in chunk {
                query = query
                    .bind(row.call_id.as_str())
                    .bind(row.company.as_str())
                    .bind(row.organization.as_str())
                    .bind(row.folder.as_str())
                    .bind(row.day.as_str())
                    .bind(row.datetime.as_str())
                    .bind(row.agent_id.as_str())
                    .bind(row.duration)
                    .bind(row.silence)
                    .bind(row.words)
                    .bind(row.agent_talk)
                    .bind(row.client_talk)
                    .bind(row.agent_emotion.as_deref())
                    .bind(row.client_emotion.as_deref())
                    .bind(row.scoring.as_str());
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    pub(crate) async fn set_scoring(
        c: &mut D::Connection,
        call_ids: &[&str],
        scoring: &str,
    ) -> Result<(), StoreError> {
        for chunk in call_ids.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "UPDATE analytics_call_facts SET scoring = $1 WHERE call_id IN ({})",
                placeholders(2, chunk.len())
            );
            let mut query = sqlx::query::<D>(&sql).bind(scoring);
            for id in chunk {
                query = query.bind(*id);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    pub(crate) async fn calls_scores(
        c: &mut D::Connection,
        call_ids: &[&str],
    ) -> Result<Vec<CallScoreRow>, StoreError> {
        Self::select_in(c, call_ids, |list| {
            format!(
                "SELECT call_id, app, category, score, hit, coverage FROM analytics_call_scores \
                 WHERE call_id IN ({list}) ORDER BY call_id, app, category"
            )
        })
        .await
    }

    pub(crate) async fn replace_calls_scores(
        c: &mut D::Connection,
        call_ids: &[&str],
        rows: &[CallScoreRow],
    ) -> Result<(), StoreError> {
        Self::execute_in(c, call_ids, |list| {
            format!("DELETE FROM analytics_call_scores WHERE call_id IN ({list})")
        })
        .await?;
        for chunk in rows.chunks(CHUNK) {
            let sql = format!(
                "INSERT INTO analytics_call_scores (call_id, app, category, score, hit, coverage) VALUES {}",
                tuples(chunk.len(), 6)
            );
            let mut query = sqlx::query::<D>(&sql);
            for row in chunk {
                query = query
                    .bind(row.call_id.as_str())
                    .bind(row.app.as_str())
                    .bind(row.category.as_str())
                    .bind(row.score)
                    .bind(row.hit)
                    .bind(row.coverage);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    /// Up to `limit` calls of a folder whose ids come after `after`, in id order (a rescore job's pages).
    pub(crate) async fn calls_after(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        after: &str,
        limit: i64,
    ) -> Result<Vec<CallRow>, StoreError> {
        Ok(sqlx::query_as::<D, CallRow>(
            "SELECT id, company, organization, folder, request_id, datetime, last_modified, filename, \
             agent_id, audio_seconds FROM analytics_calls \
             WHERE company = $1 AND organization = $2 AND folder = $3 AND id > $4 ORDER BY id LIMIT $5",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(after)
        .bind(limit)
        .fetch_all(&mut *c)
        .await?)
    }

    /// Every folder of the company, whatever its organization or status.
    pub(crate) async fn company_folders(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Vec<FolderRow>, StoreError> {
        Ok(sqlx::query_as::<D, FolderRow>(
            "SELECT company, organization, folder, settings, created, status, delete_total \
             FROM analytics_folders WHERE company = $1 ORDER BY organization, folder",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?)
    }

    /// Moves up to `limit` rows of the former category rollup into the packed one: the statement that reads
    /// them deletes them, so a row is added once, whoever moves it. Returns how many it moved, and whether
    /// rows are left (another transaction may hold the ones this one skipped). In key order, which is also
    /// the order of an index scan that the dead rows of earlier batches no longer slow once marked.
    pub(crate) async fn move_category_rollups(
        c: &mut D::Connection,
        limit: i64,
    ) -> Result<(usize, bool), StoreError> {
        let rows = sqlx::query_as::<D, FormerCategoryRow>(
            "DELETE FROM analytics_daily_categories \
             WHERE (company, organization, folder, app, day, agent_id, category) IN \
             (SELECT company, organization, folder, app, day, agent_id, category \
              FROM analytics_daily_categories \
              ORDER BY company, organization, folder, app, day, agent_id, category LIMIT $1) \
             RETURNING company, organization, folder, app, day, agent_id, category, calls, hits, coverage, \
             score, duration, silence",
        )
        .bind(limit)
        .fetch_all(&mut *c)
        .await?;
        let mut changes = RollupChanges::default();
        for row in &rows {
            changes.category(row.key.clone(), &row.sums);
        }
        Self::apply_scorecards(c, &changes).await?;
        let (left,) = sqlx::query_as::<D, (bool,)>(
            "SELECT EXISTS (SELECT 1 FROM analytics_daily_categories)",
        )
        .fetch_one(&mut *c)
        .await?;
        Ok((rows.len(), left))
    }

    /// The folder's calls, and how many of them are scored with `scoring`.
    pub(crate) async fn scoring_progress(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        scoring: &str,
    ) -> Result<ScoringProgress, StoreError> {
        let (calls, scored) = sqlx::query_as::<D, (i64, i64)>(
            "SELECT CAST(COUNT(*) AS BIGINT), \
             CAST(COALESCE(SUM(CASE WHEN f.scoring = $4 THEN 1 ELSE 0 END), 0) AS BIGINT) \
             FROM analytics_calls c LEFT JOIN analytics_call_facts f ON f.call_id = c.id \
             WHERE c.company = $1 AND c.organization = $2 AND c.folder = $3",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(scoring)
        .fetch_one(&mut *c)
        .await?;
        Ok(ScoringProgress { calls, scored })
    }

    /// The company's totals, once from the rollups and once from the per-call rows they sum: the two agree
    /// when every scored call is counted exactly once.
    pub(crate) async fn rollup_totals(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<(RollupTotals, RollupTotals), StoreError> {
        let (calls, words) = sqlx::query_as::<D, (i64, i64)>(
            "SELECT CAST(COALESCE(SUM(calls), 0) AS BIGINT), CAST(COALESCE(SUM(words), 0) AS BIGINT) \
             FROM analytics_daily_agents WHERE company = $1",
        )
        .bind(company)
        .fetch_one(&mut *c)
        .await?;
        let mut from_rollups = RollupTotals {
            calls,
            words,
            categories: Default::default(),
        };
        let packed = sqlx::query_as::<D, (String, Vec<u8>)>(
            "SELECT app, sums FROM analytics_daily_scorecards WHERE company = $1",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?;
        let mut paths = scorecards::Paths::default();
        for (app, value) in &packed {
            for (category, sums) in scorecards::read(value, &mut paths)? {
                let total = from_rollups
                    .categories
                    .entry((app.clone(), category.to_string()))
                    .or_insert((0, 0, 0));
                (total.0, total.1, total.2) = (
                    total.0 + sums.calls,
                    total.1 + sums.hits,
                    total.2 + sums.score,
                );
            }
        }
        from_rollups
            .categories
            .retain(|_, (calls, _, _)| *calls != 0);

        let (calls, words) = sqlx::query_as::<D, (i64, i64)>(
            "SELECT COUNT(*), CAST(COALESCE(SUM(words), 0) AS BIGINT) FROM analytics_call_facts \
             WHERE company = $1",
        )
        .bind(company)
        .fetch_one(&mut *c)
        .await?;
        let categories = sqlx::query_as::<D, (String, String, i64, i64, i64)>(
            "SELECT s.app, s.category, COUNT(*), CAST(SUM(s.hit) AS BIGINT), CAST(SUM(s.score) AS BIGINT) \
             FROM analytics_call_scores s JOIN analytics_call_facts f ON f.call_id = s.call_id \
             WHERE f.company = $1 GROUP BY s.app, s.category ORDER BY s.app, s.category",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?
        .into_iter()
        .map(|(app, category, calls, hits, score)| ((app, category), (calls, hits, score)))
        .collect();
        let from_calls = RollupTotals {
            calls,
            words,
            categories,
        };
        Ok((from_rollups, from_calls))
    }

    /// The folder's row without locking it (a scoring transaction reads it beside uploads to the folder).
    pub(crate) async fn peek_folder(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
    ) -> Result<Option<FolderRow>, StoreError> {
        Ok(sqlx::query_as::<D, FolderRow>(
            "SELECT company, organization, folder, settings, created, status, delete_total \
             FROM analytics_folders WHERE company = $1 AND organization = $2 AND folder = $3",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .fetch_optional(&mut *c)
        .await?)
    }
}
