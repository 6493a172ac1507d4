//! The statements of projects, written once for both databases.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::model::Project;

const COLUMNS: &str = "app_key, company, name, server_time, created_at";

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> chrono::DateTime<chrono::Utc>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    Project: Reads<D>,
{
    pub(crate) async fn insert_project(
        c: &mut D::Connection,
        p: &Project,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
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

    pub(crate) async fn project(
        c: &mut D::Connection,
        app_key: &str,
    ) -> Result<Option<Project>, StoreError> {
        Ok(sqlx::query_as::<D, Project>(&format!(
            "SELECT {COLUMNS} FROM ingest_projects WHERE app_key = $1"
        ))
        .bind(app_key)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn project_named(
        c: &mut D::Connection,
        company: &str,
        name: &str,
    ) -> Result<Option<Project>, StoreError> {
        Ok(sqlx::query_as::<D, Project>(&format!(
            "SELECT {COLUMNS} FROM ingest_projects WHERE company = $1 AND name = $2"
        ))
        .bind(company)
        .bind(name)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn projects(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Vec<Project>, StoreError> {
        Ok(sqlx::query_as::<D, Project>(&format!(
            "SELECT {COLUMNS} FROM ingest_projects WHERE company = $1 ORDER BY name"
        ))
        .bind(company)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn update_project(
        c: &mut D::Connection,
        p: &Project,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE ingest_projects SET name = $2, server_time = $3 WHERE app_key = $1",
        )
        .bind(&p.app_key)
        .bind(&p.name)
        .bind(p.server_time)
        .execute(&mut *c)
        .await
        .map_err(|e| StoreError::unique(e, format!("a project named {:?}", p.name)))?;
        Ok(D::rows_affected(&done) > 0)
    }

    /// Removes a project with its events and remembered insert ids. The project row goes first: its deletion
    /// waits for the writes that hold it (`lock_projects`), and the events they committed are then gone with
    /// the rest; later writes find no project and store nothing.
    pub(crate) async fn delete_project(
        c: &mut D::Connection,
        app_key: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>("DELETE FROM ingest_projects WHERE app_key = $1")
            .bind(app_key)
            .execute(&mut *c)
            .await?;
        for table in ["ingest_events", "ingest_insert_ids"] {
            sqlx::query::<D>(&format!("DELETE FROM {table} WHERE app_key = $1"))
                .bind(app_key)
                .execute(&mut *c)
                .await?;
        }
        Ok(D::rows_affected(&done) > 0)
    }

    /// Forgets the insert ids seen before `before` (outside the deduplication window), bound as the column
    /// is stored: a time on PostgreSQL, milliseconds on SQLite.
    pub(crate) async fn forget_insert_ids<Seen>(
        c: &mut D::Connection,
        before: Seen,
    ) -> Result<u64, StoreError>
    where
        Seen: 'static + Send + for<'q> Binds<'q, D>,
    {
        let done = sqlx::query::<D>("DELETE FROM ingest_insert_ids WHERE seen_at < $1")
            .bind(before)
            .execute(&mut *c)
            .await?;
        Ok(D::rows_affected(&done))
    }
}
