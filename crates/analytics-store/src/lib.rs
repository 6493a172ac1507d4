//! The analytics service's tables (companies as analytics knows them, organizations, folders, calls,
//! their metadata, facts and scores, applications, the daily rollups, transcription requests and
//! callback secrets). This crate alone reads and writes them; every function runs on the pool
//! (`&db`) or inside the caller's transaction (`&mut tx`), so a change, its related rows and the bus
//! message announcing it commit together.

pub mod apps;
mod apps_sql;
pub mod callback_secrets;
mod callback_secrets_sql;
pub mod metadata;
mod metadata_sql;
pub mod requests;
mod requests_sql;
pub mod rollups;
mod rows;
mod scorecards;
mod scoring_sql;
mod sql;
pub mod stats;
mod stats_sql;

use common::db::{Database, Handle, Migrations, StoreError};
use common::dispatch;
use common::search::Scope;

use sql::Statements;

pub use apps::*;
pub use metadata::*;
pub use rows::*;

/// The analytics tables (versions 5001 to 5999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

/// A scope as the statements bind it: three strings, empty for "all".
fn parts(scope: &Scope) -> (&str, &str, &str) {
    (
        scope.company.as_str(),
        scope.organization.as_deref().unwrap_or(""),
        scope.folder.as_deref().unwrap_or(""),
    )
}

pub async fn insert_company<'a>(
    h: impl Into<Handle<'a>>,
    row: &CompanyRow,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_company(row))
}

pub async fn rename_company<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::rename_company(company, name))
}

/// The company; inside a transaction, locked until it ends.
pub async fn get_company<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Option<CompanyRow>, StoreError> {
    dispatch!(h, Statements::get_company(company))
}

pub async fn organizations<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Vec<String>, StoreError> {
    dispatch!(h, Statements::organizations(company))
}

pub async fn insert_organization<'a>(
    h: impl Into<Handle<'a>>,
    row: &OrganizationRow,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_organization(row))
}

pub async fn set_timezone<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    timezone: &str,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::set_timezone(company, organization, timezone))
}

/// The organization; inside a transaction, locked until it ends.
pub async fn get_organization<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
) -> Result<Option<OrganizationRow>, StoreError> {
    dispatch!(h, Statements::get_organization(company, organization))
}

pub async fn folders<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
) -> Result<Vec<String>, StoreError> {
    dispatch!(h, Statements::folders(company, organization))
}

pub async fn insert_folder<'a>(
    h: impl Into<Handle<'a>>,
    row: &FolderRow,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_folder(row))
}

pub async fn set_folder_settings<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
    settings: &str,
) -> Result<(), StoreError> {
    dispatch!(
        h,
        Statements::set_folder_settings(company, organization, folder, settings)
    )
}

/// The folder; inside a transaction, locked until it ends.
pub async fn get_folder<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
) -> Result<Option<FolderRow>, StoreError> {
    dispatch!(h, Statements::get_folder(company, organization, folder))
}

/// Marks the scope and everything below it as being deleted; `total` is how many calls it holds.
pub async fn mark_deleting<'a>(
    h: impl Into<Handle<'a>>,
    scope: &Scope,
    total: i64,
) -> Result<(), StoreError> {
    let (company, organization, folder) = parts(scope);
    dispatch!(
        h,
        Statements::mark_deleting(company, organization, folder, total)
    )
}

pub async fn count_calls<'a>(h: impl Into<Handle<'a>>, scope: &Scope) -> Result<i64, StoreError> {
    let (company, organization, folder) = parts(scope);
    dispatch!(h, Statements::count_calls(company, organization, folder))
}

/// Up to `limit` calls of the scope, in id order.
pub async fn calls_in<'a>(
    h: impl Into<Handle<'a>>,
    scope: &Scope,
    limit: i64,
) -> Result<Vec<CallRow>, StoreError> {
    let (company, organization, folder) = parts(scope);
    dispatch!(
        h,
        Statements::calls_in(company, organization, folder, limit)
    )
}

/// Removes the folders, organizations and company rows of the scope; its calls must be gone.
pub async fn delete_scope_rows<'a>(
    h: impl Into<Handle<'a>>,
    scope: &Scope,
) -> Result<(), StoreError> {
    let (company, organization, folder) = parts(scope);
    dispatch!(
        h,
        Statements::delete_scope_rows(company, organization, folder)
    )
}

/// Inserts the calls' rows.
pub async fn insert_calls<'a>(
    h: impl Into<Handle<'a>>,
    rows: &[&CallRow],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::insert_calls(rows))
}

/// The call; inside a transaction, locked until it ends, so changes of one call are serialized.
pub async fn get_call<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
) -> Result<Option<CallRow>, StoreError> {
    Ok(get_calls(h, &[id]).await?.pop())
}

/// The calls among `ids` that exist, in the order of their ids; inside a transaction locked until it
/// ends, in that order, so two transactions locking calls never wait for each other in turn.
pub async fn get_calls<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[&str],
) -> Result<Vec<CallRow>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::get_calls(ids))
}

/// Removes the calls and their metadata rows.
pub async fn delete_calls<'a>(h: impl Into<Handle<'a>>, ids: &[String]) -> Result<(), StoreError> {
    dispatch!(h, Statements::delete_calls(ids))
}

/// Adds the summed changes to the daily rollups, in key order.
pub async fn apply_rollups<'a>(
    h: impl Into<Handle<'a>>,
    changes: &rollups::RollupChanges,
) -> Result<(), StoreError> {
    if changes.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::apply_rollups(changes))
}

/// The call's figures and scoring fingerprint, if it was scored.
pub async fn call_facts<'a>(
    h: impl Into<Handle<'a>>,
    call_id: &str,
) -> Result<Option<CallFactsRow>, StoreError> {
    Ok(calls_facts(h, &[call_id]).await?.pop())
}

/// The figures and scoring fingerprint of those of the calls that were scored.
pub async fn calls_facts<'a>(
    h: impl Into<Handle<'a>>,
    call_ids: &[&str],
) -> Result<Vec<CallFactsRow>, StoreError> {
    if call_ids.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::calls_facts(call_ids))
}

/// Records calls' figures the first time they are scored (their rollup rows are the caller's to add).
pub async fn insert_calls_facts<'a>(
    h: impl Into<Handle<'a>>,
    rows: &[CallFactsRow],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::insert_calls_facts(rows))
}

/// Records the fingerprint of the calls' current scores.
pub async fn set_scoring<'a>(
    h: impl Into<Handle<'a>>,
    call_ids: &[&str],
    scoring: &str,
) -> Result<(), StoreError> {
    if call_ids.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::set_scoring(call_ids, scoring))
}

/// The call's score rows, by application and category.
pub async fn call_scores<'a>(
    h: impl Into<Handle<'a>>,
    call_id: &str,
) -> Result<Vec<CallScoreRow>, StoreError> {
    calls_scores(h, &[call_id]).await
}

/// The score rows of the calls, by call, application and category.
pub async fn calls_scores<'a>(
    h: impl Into<Handle<'a>>,
    call_ids: &[&str],
) -> Result<Vec<CallScoreRow>, StoreError> {
    if call_ids.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::calls_scores(call_ids))
}

/// Replaces every score row of the calls `call_ids` by `rows`.
pub async fn replace_calls_scores<'a>(
    h: impl Into<Handle<'a>>,
    call_ids: &[&str],
    rows: &[CallScoreRow],
) -> Result<(), StoreError> {
    if call_ids.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::replace_calls_scores(call_ids, rows))
}

/// Up to `limit` calls of the folder after the id `after`, in id order.
pub async fn calls_after<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<CallRow>, StoreError> {
    dispatch!(
        h,
        Statements::calls_after(company, organization, folder, after, limit)
    )
}

/// Every folder of the company.
pub async fn company_folders<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Vec<FolderRow>, StoreError> {
    dispatch!(h, Statements::company_folders(company))
}

/// Moves the rows of the category rollup as it was before it was packed (migration 5009) into the packed
/// one, a batch per transaction, until none is left; how many rows it moved. Run at start-up: every
/// batch deletes what it adds, so instances starting together, or a start cut off midway, count each
/// row once.
pub async fn move_category_rollups(db: &Database) -> Result<usize, StoreError> {
    const BATCH: i64 = 5_000;
    let mut moved = 0;
    loop {
        let mut tx = db.begin().await?;
        let (n, left) = dispatch!(&mut tx, Statements::move_category_rollups(BATCH))?;
        tx.commit().await?;
        moved += n;
        // Until none is left: on PostgreSQL, a batch that another instance's transaction held first is
        // skipped once that one commits, so an empty batch does not mean an empty table.
        if !left {
            return Ok(moved);
        }
    }
}

/// The folder's calls, and how many of them are scored with the fingerprint `scoring`: a rescoring is
/// done when the two are equal.
pub async fn scoring_progress<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
    scoring: &str,
) -> Result<ScoringProgress, StoreError> {
    dispatch!(
        h,
        Statements::scoring_progress(company, organization, folder, scoring)
    )
}

/// The company's totals from the rollups, then from the per-call rows they sum; equal when every scored
/// call is counted exactly once.
pub async fn rollup_totals<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<(rollups::RollupTotals, rollups::RollupTotals), StoreError> {
    dispatch!(h, Statements::rollup_totals(company))
}

/// The folder, without locking it.
pub async fn peek_folder<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
) -> Result<Option<FolderRow>, StoreError> {
    dispatch!(h, Statements::peek_folder(company, organization, folder))
}
