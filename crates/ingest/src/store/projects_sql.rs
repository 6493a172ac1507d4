//! The statements of projects, compiled for each database (`postgres.rs`, `sqlite.rs`).

use common::db::StoreError;

use super::{Db, Seen};
use crate::model::Project;

type Conn = <Db as sqlx::Database>::Connection;

const COLUMNS: &str = "app_key, company, name, server_time, created_at";

pub(crate) async fn insert_project(c: &mut Conn, p: &Project) -> Result<(), StoreError> {
    sqlx::query::<Db>(
        "INSERT INTO ingest_projects (app_key, company, name, server_time, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&p.app_key)
    .bind(&p.company)
    .bind(&p.name)
    .bind(p.server_time)
    .bind(p.created_at)
    .execute(&mut *c)
    .await
    .map_err(|e| StoreError::unique(e, format!("a project named {:?}", p.name)))?;
    Ok(())
}

pub(crate) async fn project(c: &mut Conn, app_key: &str) -> Result<Option<Project>, StoreError> {
    Ok(sqlx::query_as::<Db, Project>(&format!(
        "SELECT {COLUMNS} FROM ingest_projects WHERE app_key = $1"
    ))
    .bind(app_key)
    .fetch_optional(&mut *c)
    .await?)
}

pub(crate) async fn project_named(
    c: &mut Conn,
    company: &str,
    name: &str,
) -> Result<Option<Project>, StoreError> {
    Ok(sqlx::query_as::<Db, Project>(&format!(
        "SELECT {COLUMNS} FROM ingest_projects WHERE company = $1 AND name = $2"
    ))
    .bind(company)
    .bind(name)
    .fetch_optional(&mut *c)
    .await?)
}

pub(crate) async fn projects(c: &mut Conn, company: &str) -> Result<Vec<Project>, StoreError> {
    Ok(sqlx::query_as::<Db, Project>(&format!(
        "SELECT {COLUMNS} FROM ingest_projects WHERE company = $1 ORDER BY name"
    ))
    .bind(company)
    .fetch_all(&mut *c)
    .await?)
}

pub(crate) async fn update_project(c: &mut Conn, p: &Project) -> Result<bool, StoreError> {
    let done = sqlx::query::<Db>(
        "UPDATE ingest_projects SET name = $2, server_time = $3 WHERE app_key = $1",
    )
    .bind(&p.app_key)
    .bind(&p.name)
    .bind(p.server_time)
    .execute(&mut *c)
    .await
    .map_err(|e| StoreError::unique(e, format!("a project named {:?}", p.name)))?;
    Ok(done.rows_affected() > 0)
}

/// Removes a project with its events and remembered insert ids. The project row goes first: its deletion
/// waits for the writes that hold it (`lock_projects`), and the events they committed are then gone with
/// the rest; later writes find no project and store nothing.
pub(crate) async fn delete_project(c: &mut Conn, app_key: &str) -> Result<bool, StoreError> {
    let done = sqlx::query::<Db>("DELETE FROM ingest_projects WHERE app_key = $1")
        .bind(app_key)
        .execute(&mut *c)
        .await?;
    for table in ["ingest_events", "ingest_insert_ids"] {
        sqlx::query::<Db>(&format!("DELETE FROM {table} WHERE app_key = $1"))
            .bind(app_key)
            .execute(&mut *c)
            .await?;
    }
    Ok(done.rows_affected() > 0)
}

/// Forgets the insert ids seen before `before` (outside the deduplication window).
pub(crate) async fn forget_insert_ids(c: &mut Conn, before: Seen) -> Result<u64, StoreError> {
    let done = sqlx::query::<Db>("DELETE FROM ingest_insert_ids WHERE seen_at < $1")
        .bind(before)
        .execute(&mut *c)
        .await?;
    Ok(done.rows_affected())
}
