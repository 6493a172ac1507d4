//! The reads of `/stats` and `/appstats` (docs/scoring.md, Reads): per day and agent, the sums of the
//! daily rollups for whole days, and for a day the range starts or ends within, the same sums over that
//! day's calls between the two times, so that the answer is exact and whole days never read calls.

use std::sync::Arc;

use common::db::{Database, Handle, StoreError};
use common::dispatch;

use super::rollups::CategoryDayDelta;
use super::rows::{AgentDayRow, CategoryDayRow, ScorecardDayRow};
use super::scorecards;
use super::sql::Statements;
use scoring::figures::daterange::Plan;

/// Which calls a read covers: a folder, or every folder of the organization (`folder` None).
#[derive(Debug, Clone, Copy)]
pub struct StatsScope<'s> {
    pub company: &'s str,
    pub organization: &'s str,
    pub folder: Option<&'s str>,
}

impl StatsScope<'_> {
    fn folder(&self) -> &str {
        self.folder.unwrap_or("")
    }
}

/// Rollup sums per day and agent over the whole days `from` to `to` (YYYY-MM-DD, both included); agents
/// without calls are left out.
pub async fn agent_days<'a>(
    h: impl Into<Handle<'a>>,
    scope: StatsScope<'_>,
    from: &str,
    to: &str,
) -> Result<Vec<AgentDayRow>, StoreError> {
    let (company, organization, folder) = (scope.company, scope.organization, scope.folder());
    dispatch!(
        h,
        Statements::agent_days(company, organization, folder, from, to)
    )
}

/// The same sums over the calls of `day` whose `datetime` lies between `from` and `to` (included).
pub async fn agent_day_cut<'a>(
    h: impl Into<Handle<'a>>,
    scope: StatsScope<'_>,
    day: &str,
    from: &str,
    to: &str,
) -> Result<Vec<AgentDayRow>, StoreError> {
    let (company, organization, folder) = (scope.company, scope.organization, scope.folder());
    dispatch!(
        h,
        Statements::agent_day_cut(company, organization, folder, day, from, to)
    )
}

/// The packed category rollup rows of `app` over whole days, one per folder of the scope, agent and day
/// (scorecards.rs): `scorecards` reads them.
async fn category_days<'a>(
    h: impl Into<Handle<'a>>,
    scope: StatsScope<'_>,
    app: &str,
    from: &str,
    to: &str,
) -> Result<Vec<ScorecardDayRow>, StoreError> {
    let (company, organization, folder) = (scope.company, scope.organization, scope.folder());
    dispatch!(
        h,
        Statements::category_days(company, organization, folder, app, from, to)
    )
}

/// The same sums over the calls of `day` between two times, from their figures and scores.
pub async fn category_day_cut<'a>(
    h: impl Into<Handle<'a>>,
    scope: StatsScope<'_>,
    app: &str,
    day: &str,
    from: &str,
    to: &str,
) -> Result<Vec<CategoryDayRow>, StoreError> {
    let (company, organization, folder) = (scope.company, scope.organization, scope.folder());
    dispatch!(
        h,
        Statements::category_day_cut(company, organization, folder, app, day, from, to)
    )
}

/// The agent-day sums of a planned range, in day and agent order.
pub async fn agent_rows(
    db: &Database,
    scope: StatsScope<'_>,
    plan: &Plan,
) -> Result<Vec<AgentDayRow>, StoreError> {
    let mut rows = Vec::new();
    if let Some((from, to)) = &plan.whole {
        rows.extend(agent_days(db, scope, from, to).await?);
    }
    for cut in &plan.cut {
        rows.extend(agent_day_cut(db, scope, &cut.day, &cut.from, &cut.to).await?);
    }
    rows.sort_by(|a, b| (&a.day, &a.agent_id).cmp(&(&b.day, &b.agent_id)));
    Ok(rows)
}

/// Every category's sums of an application on one agent's day, by path in byte order ('' first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentScorecard {
    pub day: String,
    pub agent_id: String,
    pub categories: Vec<(Arc<str>, CategoryDayDelta)>,
}

impl AgentScorecard {
    /// Adds another scorecard of the same day and agent (another folder's).
    fn add(&mut self, other: &AgentScorecard) {
        let mine = std::mem::take(&mut self.categories);
        self.categories = scorecards::add_in_order(mine, other.categories.iter().cloned());
    }
}

/// The scorecards of `app` over a planned range, in day and agent order (the folders' scorecards of an
/// agent's day added up).
pub async fn scorecards(
    db: &Database,
    scope: StatsScope<'_>,
    app: &str,
    plan: &Plan,
) -> Result<Vec<AgentScorecard>, StoreError> {
    let mut cards = Vec::new();
    let mut paths = scorecards::Paths::default();
    if let Some((from, to)) = &plan.whole {
        for row in category_days(db, scope, app, from, to).await? {
            let categories = scorecards::read(&row.sums, &mut paths)?;
            cards.push(AgentScorecard {
                day: row.day,
                agent_id: row.agent_id,
                categories,
            });
        }
    }
    for cut in &plan.cut {
        let rows = category_day_cut(db, scope, app, &cut.day, &cut.from, &cut.to).await?;
        for group in rows.chunk_by(|a, b| (&a.day, &a.agent_id) == (&b.day, &b.agent_id)) {
            let mut categories: Vec<(Arc<str>, CategoryDayDelta)> = group
                .iter()
                .map(|row| Ok((paths.get(row.category.as_bytes())?, row.sums.clone())))
                .collect::<Result<_, StoreError>>()?;
            categories.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            cards.push(AgentScorecard {
                day: group[0].day.clone(),
                agent_id: group[0].agent_id.clone(),
                categories,
            });
        }
    }
    // Already in this order from the database when its collation sorts as bytes do (the sort then
    // only checks it).
    cards.sort_by(|a, b| (&a.day, &a.agent_id).cmp(&(&b.day, &b.agent_id)));
    // The folders' scorecards of one agent's day, read over the organization, are added up.
    cards.dedup_by(|card, kept| {
        let same = (&card.day, &card.agent_id) == (&kept.day, &kept.agent_id);
        if same {
            kept.add(card);
        }
        same
    });
    Ok(cards)
}
