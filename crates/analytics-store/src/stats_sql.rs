//! The statements of the statistics reads (docs/scoring.md, Reads), written once for both databases
//! like `sql.rs`: sums of the daily rollups over a span of whole days, and the same sums over the calls of
//! one day between two times, from the calls' figures and scores. Sums are cast so that both databases
//! return the same types. A folder bound as '' stands for every folder of the organization.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::{AgentDayRow, CategoryDayRow, ScorecardDayRow};
use crate::sql::Statements;

const AGENT_SUMS: &str = "CAST(SUM(calls) AS BIGINT) AS calls, \
     CAST(SUM(duration) AS DOUBLE PRECISION) AS duration, \
     CAST(SUM(silence) AS DOUBLE PRECISION) AS silence, \
     CAST(SUM(words) AS BIGINT) AS words, \
     CAST(SUM(agent_talk) AS DOUBLE PRECISION) AS agent_talk, \
     CAST(SUM(client_talk) AS DOUBLE PRECISION) AS client_talk, \
     CAST(SUM(agent_positive) AS BIGINT) AS agent_positive, \
     CAST(SUM(agent_negative) AS BIGINT) AS agent_negative, \
     CAST(SUM(agent_improving) AS BIGINT) AS agent_improving, \
     CAST(SUM(agent_worsening) AS BIGINT) AS agent_worsening, \
     CAST(SUM(client_positive) AS BIGINT) AS client_positive, \
     CAST(SUM(client_negative) AS BIGINT) AS client_negative, \
     CAST(SUM(client_improving) AS BIGINT) AS client_improving, \
     CAST(SUM(client_worsening) AS BIGINT) AS client_worsening";

/// The count of calls whose `speaker`'s emotion is `emotion`, named as the rollup's column.
fn emotion_count(speaker: &str, emotion: &str) -> String {
    format!(
        "CAST(SUM(CASE WHEN {speaker}_emotion = '{emotion}' THEN 1 ELSE 0 END) AS BIGINT) \
         AS {speaker}_{emotion}"
    )
}

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    AgentDayRow: Reads<D>,
    CategoryDayRow: Reads<D>,
    ScorecardDayRow: Reads<D>,
{
    pub(crate) async fn agent_days(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<AgentDayRow>, StoreError> {
        Ok(sqlx::query_as::<D, AgentDayRow>(&format!(
            "SELECT day, agent_id, {AGENT_SUMS} FROM analytics_daily_agents \
             WHERE company = $1 AND organization = $2 AND ($3 = '' OR folder = $3) \
             AND day >= $4 AND day <= $5 \
             GROUP BY day, agent_id HAVING SUM(calls) > 0 ORDER BY day, agent_id"
        ))
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(from)
        .bind(to)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn agent_day_cut(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        day: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<AgentDayRow>, StoreError> {
        let emotions: Vec<String> = ["agent", "client"]
            .into_iter()
            .flat_map(|speaker| {
                ["positive", "negative", "improving", "worsening"]
                    .into_iter()
                    .map(move |e| emotion_count(speaker, e))
            })
            .collect();
        Ok(sqlx::query_as::<D, AgentDayRow>(&format!(
            "SELECT day, agent_id, CAST(COUNT(*) AS BIGINT) AS calls, \
             CAST(SUM(duration) AS DOUBLE PRECISION) AS duration, \
             CAST(SUM(silence) AS DOUBLE PRECISION) AS silence, \
             CAST(SUM(words) AS BIGINT) AS words, \
             CAST(SUM(agent_talk) AS DOUBLE PRECISION) AS agent_talk, \
             CAST(SUM(client_talk) AS DOUBLE PRECISION) AS client_talk, {} \
             FROM analytics_call_facts \
             WHERE company = $1 AND organization = $2 AND ($3 = '' OR folder = $3) \
             AND day = $4 AND datetime >= $5 AND datetime <= $6 \
             GROUP BY day, agent_id ORDER BY day, agent_id",
            emotions.join(", ")
        ))
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(day)
        .bind(from)
        .bind(to)
        .fetch_all(&mut *c)
        .await?)
    }

    /// The packed category rollup rows of `app` over whole days (day, agent, value), in day and agent order.
    /// A folder has one row per agent's day, read in its primary key's order; every folder of the
    /// organization (`folder` '') is read through `analytics_daily_scorecards_by_app` in the same order, and
    /// the caller adds up the rows of one agent's day (`stats::scorecards`). A `($3 = '' OR folder = $3)`
    /// condition would keep the folder out of the index's range (and out of a generic plan's).
    pub(crate) async fn category_days(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        app: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<ScorecardDayRow>, StoreError> {
        let sql = if folder.is_empty() {
            "SELECT day, agent_id, sums FROM analytics_daily_scorecards \
             WHERE company = $1 AND organization = $2 AND app = $3 AND day >= $4 AND day <= $5 \
             ORDER BY day, agent_id"
        } else {
            "SELECT day, agent_id, sums FROM analytics_daily_scorecards \
             WHERE company = $1 AND organization = $2 AND app = $3 AND day >= $4 AND day <= $5 \
             AND folder = $6 ORDER BY day, agent_id"
        };
        let query = sqlx::query_as::<D, ScorecardDayRow>(sql)
            .bind(company)
            .bind(organization)
            .bind(app)
            .bind(from)
            .bind(to);
        let query = if folder.is_empty() {
            query
        } else {
            query.bind(folder)
        };
        Ok(query.fetch_all(&mut *c).await?)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn category_day_cut(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        app: &str,
        day: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<CategoryDayRow>, StoreError> {
        Ok(sqlx::query_as::<D, CategoryDayRow>(
            "SELECT f.day AS day, f.agent_id AS agent_id, s.category AS category, \
             CAST(COUNT(*) AS BIGINT) AS calls, CAST(SUM(s.hit) AS BIGINT) AS hits, \
             CAST(SUM(s.coverage) AS DOUBLE PRECISION) AS coverage, CAST(SUM(s.score) AS BIGINT) AS score, \
             CAST(SUM(f.duration) AS DOUBLE PRECISION) AS duration, \
             CAST(SUM(f.silence) AS DOUBLE PRECISION) AS silence \
             FROM analytics_call_facts f JOIN analytics_call_scores s ON s.call_id = f.call_id \
             WHERE f.company = $1 AND f.organization = $2 AND ($3 = '' OR f.folder = $3) AND s.app = $4 \
             AND f.day = $5 AND f.datetime >= $6 AND f.datetime <= $7 \
             GROUP BY f.day, f.agent_id, s.category ORDER BY f.day, f.agent_id, s.category",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(app)
        .bind(day)
        .bind(from)
        .bind(to)
        .fetch_all(&mut *c)
        .await?)
    }
}
