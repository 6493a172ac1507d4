//! The ingestion service's tables, which it alone reads and writes: projects, events and the insert ids
//! remembered for deduplication. Projects are written once for both databases (`projects_sql.rs`); events
//! have a writer per database, since PostgreSQL gets them by binary `COPY` into monthly partitions.

mod events_pg;
mod events_query;
mod events_sqlite;
mod projects_sql;

use std::collections::HashSet;

use common::db::{Database, Handle, Migrations, StoreError, Tx};
use common::dispatch;
use projects_sql::Statements;

pub use events_pg::{copy_data, Partitions, COPY};
pub use events_query::{EventQuery, Fresh, Written};

use crate::model::{NewEvent, Project, StoredEvent};

/// The ingestion tables (versions 6001 to 6999).
pub const MIGRATIONS: Migrations = Migrations {
    postgres: || sqlx::migrate!("./migrations/postgres"),
    sqlite: || sqlx::migrate!("./migrations/sqlite"),
};

/// Writes `events` in one transaction: claims their insert ids (an id seen after `window_start_ms`
/// makes its event a duplicate) and stores the rest, except the events of projects that no longer exist.
/// The projects are locked against deletion until the transaction ends, so a deletion never leaves
/// events behind. Nothing is written when it fails.
pub async fn insert_events(
    db: &Database,
    partitions: &Partitions,
    events: &[&NewEvent],
    window_start_ms: i64,
    now_ms: i64,
) -> Result<Written, StoreError> {
    let keys: Vec<&str> = {
        let mut keys: Vec<&str> = events.iter().map(|e| e.app_key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    };
    if let Database::Postgres(pool, _) = db {
        partitions
            .ensure(pool, events.iter().map(|e| e.time_ms))
            .await?;
    }
    // On SQLite the transaction holds the database's write lock from its start: no deletion of a
    // project runs until the commit; on PostgreSQL the projects are locked.
    let mut tx = db.begin().await?;
    let (missing, mut fresh) = match &mut tx {
        Tx::Postgres(tx) => {
            let missing = events_pg::lock_projects(tx, &keys).await?;
            let kept = without(events, &missing);
            let fresh = events_pg::insert(tx, &kept, window_start_ms, now_ms).await?;
            (missing, fresh)
        }
        Tx::Sqlite(tx, _) => {
            let missing = events_sqlite::missing_projects(tx, &keys).await?;
            let kept = without(events, &missing);
            let fresh = events_sqlite::insert(tx, &kept, window_start_ms, now_ms).await?;
            (missing, fresh)
        }
    };
    tx.commit().await?;
    Ok(Written {
        fresh: spread(events, &missing, &mut fresh),
        missing,
    })
}

/// The events whose project exists.
fn without<'a>(events: &[&'a NewEvent], missing: &HashSet<String>) -> Vec<&'a NewEvent> {
    events
        .iter()
        .filter(|e| !missing.contains(&e.app_key))
        .copied()
        .collect()
}

/// `fresh` of the kept events, spread back over all `events` (false for those of missing projects).
fn spread(events: &[&NewEvent], missing: &HashSet<String>, fresh: &mut Fresh) -> Fresh {
    let mut kept = fresh.drain(..);
    events
        .iter()
        .map(|e| !missing.contains(&e.app_key) && kept.next().unwrap_or(false))
        .collect()
}

/// A page of events. On PostgreSQL it runs on the statement pool, which closes a connection whose read
/// was cut off midway (the request gone), so that the server ends the read rather than finish it.
pub async fn events(db: &Database, query: &EventQuery<'_>) -> Result<Vec<StoredEvent>, StoreError> {
    dispatch!(db, events_pg::read | events_sqlite::read(query))
}

pub async fn insert_project<'a>(h: impl Into<Handle<'a>>, p: &Project) -> Result<(), StoreError> {
    dispatch!(h, Statements::insert_project(p))
}

pub async fn project<'a>(
    h: impl Into<Handle<'a>>,
    app_key: &str,
) -> Result<Option<Project>, StoreError> {
    dispatch!(h, Statements::project(app_key))
}

pub async fn project_named<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
) -> Result<Option<Project>, StoreError> {
    dispatch!(h, Statements::project_named(company, name))
}

pub async fn projects<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Vec<Project>, StoreError> {
    dispatch!(h, Statements::projects(company))
}

pub async fn update_project<'a>(h: impl Into<Handle<'a>>, p: &Project) -> Result<bool, StoreError> {
    dispatch!(h, Statements::update_project(p))
}

pub async fn delete_project<'a>(
    h: impl Into<Handle<'a>>,
    app_key: &str,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::delete_project(app_key))
}

/// Forgets the insert ids seen before `before_ms`.
pub async fn forget_insert_ids(db: &Database, before_ms: i64) -> Result<u64, StoreError> {
    match db {
        Database::Postgres(pool, _) => {
            let before = chrono::DateTime::from_timestamp_millis(before_ms).unwrap_or_default();
            Statements::<sqlx::Postgres>::forget_insert_ids(&mut *pool.acquire().await?, before)
                .await
        }
        Database::Sqlite(pool, ..) => {
            let _turn = db.write_turn().await?;
            Statements::<sqlx::Sqlite>::forget_insert_ids(&mut *pool.acquire().await?, before_ms)
                .await
        }
    }
}

/// Makes the table ready for the events of the month of `now_ms` and of the next one: their partitions
/// on PostgreSQL; nothing on SQLite, whose table is one.
pub async fn prepare_months(
    db: &Database,
    partitions: &Partitions,
    now_ms: i64,
) -> Result<(), StoreError> {
    match db {
        Database::Postgres(pool, _) => partitions.prepare(pool, now_ms).await,
        Database::Sqlite(..) => Ok(()),
    }
}

/// Removes every event before `cutoff_ms`, the first instant of a month (see `retention`): on PostgreSQL
/// by dropping the partitions of the months before it, on SQLite by deleting their rows a few thousand at
/// a time, so that writers wait for the database's lock no longer than for one of those. How many events
/// were removed on SQLite, how many months on PostgreSQL.
pub async fn drop_events_before(
    db: &Database,
    partitions: &Partitions,
    cutoff_ms: i64,
) -> Result<u64, StoreError> {
    match db {
        Database::Postgres(pool, _) => partitions.drop_before(pool, cutoff_ms).await,
        Database::Sqlite(pool, ..) => events_sqlite::delete_before(db, pool, cutoff_ms).await,
    }
}

/// Creates the company's project named `name` unless it exists; the project either way. For
/// `speechd bootstrap`, inside its transaction.
pub async fn ensure_project(
    tx: &mut common::db::Tx,
    company: &str,
    name: &str,
) -> Result<Project, StoreError> {
    if let Some(existing) = project_named(&mut *tx, company, name).await? {
        return Ok(existing);
    }
    let project = Project {
        app_key: crate::model::new_app_key(),
        company: company.to_string(),
        name: name.to_string(),
        server_time: false,
        created_at: common::db::now(),
    };
    insert_project(&mut *tx, &project).await?;
    Ok(project)
}
