//! The analytics statements on companies, organizations, folders and calls, written once for both
//! databases; `Statements` gathers these and those of the other `*_sql.rs` files. A scope (company,
//! organization, folder) is bound as three strings, the empty string standing for "all".

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::*;

const SCOPE: &str = "company = $1 AND ($2 = '' OR organization = $2) AND ($3 = '' OR folder = $3)";

pub(crate) const CALL_COLUMNS: &str =
    "id, company, organization, folder, request_id, datetime, last_modified, \
                            filename, agent_id, audio_seconds";

/// Rows per statement of the batch forms: far below either database's limit on bound values.
pub(crate) const ROWS_PER_STATEMENT: usize = 300;

/// `($1, $2), ($3, $4), ...`: `rows` tuples of `width` placeholders.
pub(crate) fn tuples(rows: usize, width: usize) -> String {
    (0..rows)
        .map(|row| {
            let values = (1..=width)
                .map(|i| format!("${}", row * width + i))
                .collect::<Vec<_>>()
                .join(", ");
            format!("({values})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `$first, $first + 1, ...`: `n` placeholders.
pub(crate) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statements of every `*_sql.rs` file, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> f64: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (i64,): Reads<D>,
    (String,): Reads<D>,
    CallRow: Reads<D>,
    CompanyRow: Reads<D>,
    FolderRow: Reads<D>,
    OrganizationRow: Reads<D>,
    SecretGeneration: Reads<D>,
{
    pub(crate) async fn insert_company(
        c: &mut D::Connection,
        row: &CompanyRow,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO analytics_companies (company, name, created, status, delete_total) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&row.company)
        .bind(&row.name)
        .bind(&row.created)
        .bind(&row.status)
        .bind(row.delete_total)
        .execute(&mut *c)
        .await
        .map_err(|e| StoreError::unique(e, format!("company {}", row.company)))?;
        Ok(())
    }

    pub(crate) async fn rename_company(
        c: &mut D::Connection,
        company: &str,
        name: &str,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>("UPDATE analytics_companies SET name = $2 WHERE company = $1")
            .bind(company)
            .bind(name)
            .execute(&mut *c)
            .await?;
        Ok(())
    }

    pub(crate) async fn get_company(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Option<CompanyRow>, StoreError> {
        let sql = format!(
            "SELECT company, name, created, status, delete_total FROM analytics_companies \
             WHERE company = $1{for_update}",
            for_update = D::FOR_UPDATE
        );
        Ok(sqlx::query_as::<D, CompanyRow>(&sql)
            .bind(company)
            .fetch_optional(&mut *c)
            .await?)
    }

    pub(crate) async fn insert_organization(
        c: &mut D::Connection,
        row: &OrganizationRow,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO analytics_organizations (company, organization, timezone, created, status, \
             delete_total) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&row.company)
        .bind(&row.organization)
        .bind(&row.timezone)
        .bind(&row.created)
        .bind(&row.status)
        .bind(row.delete_total)
        .execute(&mut *c)
        .await
        .map_err(|e| StoreError::unique(e, format!("organization {}", row.organization)))?;
        Ok(())
    }

    pub(crate) async fn set_timezone(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        timezone: &str,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE analytics_organizations SET timezone = $3 WHERE company = $1 AND organization = $2",
        )
        .bind(company)
        .bind(organization)
        .bind(timezone)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn get_organization(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
    ) -> Result<Option<OrganizationRow>, StoreError> {
        let sql = format!(
            "SELECT company, organization, timezone, created, status, delete_total \
             FROM analytics_organizations WHERE company = $1 AND organization = $2{for_update}",
            for_update = D::FOR_UPDATE
        );
        Ok(sqlx::query_as::<D, OrganizationRow>(&sql)
            .bind(company)
            .bind(organization)
            .fetch_optional(&mut *c)
            .await?)
    }

    pub(crate) async fn organizations(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<D, String>(
            "SELECT organization FROM analytics_organizations WHERE company = $1 ORDER BY organization",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn insert_folder(
        c: &mut D::Connection,
        row: &FolderRow,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO analytics_folders (company, organization, folder, settings, created, status, \
             delete_total) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&row.company)
        .bind(&row.organization)
        .bind(&row.folder)
        .bind(&row.settings)
        .bind(&row.created)
        .bind(&row.status)
        .bind(row.delete_total)
        .execute(&mut *c)
        .await
        .map_err(|e| StoreError::unique(e, format!("folder {}", row.folder)))?;
        Ok(())
    }

    pub(crate) async fn set_folder_settings(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        settings: &str,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE analytics_folders SET settings = $4 \
             WHERE company = $1 AND organization = $2 AND folder = $3",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(settings)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn get_folder(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
    ) -> Result<Option<FolderRow>, StoreError> {
        let sql = format!(
            "SELECT company, organization, folder, settings, created, status, delete_total \
             FROM analytics_folders WHERE company = $1 AND organization = $2 AND folder = $3{for_update}", for_update = D::FOR_UPDATE);
        Ok(sqlx::query_as::<D, FolderRow>(&sql)
            .bind(company)
            .bind(organization)
            .bind(folder)
            .fetch_optional(&mut *c)
            .await?)
    }

    pub(crate) async fn folders(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<D, String>(
            "SELECT folder FROM analytics_folders WHERE company = $1 AND organization = $2 ORDER BY folder",
        )
        .bind(company)
        .bind(organization)
        .fetch_all(&mut *c)
        .await?)
    }

    /// Marks the scope's own row (and, for a company or organization, every row below it) as being deleted,
    /// remembering how many calls it held.
    pub(crate) async fn mark_deleting(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        total: i64,
    ) -> Result<(), StoreError> {
        let own = match (organization.is_empty(), folder.is_empty()) {
            (true, _) => {
                "UPDATE analytics_companies SET status = 'deleting', delete_total = $4 \
                          WHERE company = $1 AND $2 = '' AND $3 = ''"
            }
            (false, true) => {
                "UPDATE analytics_organizations SET status = 'deleting', delete_total = $4 \
                              WHERE company = $1 AND organization = $2 AND $3 = ''"
            }
            (false, false) => {
                "UPDATE analytics_folders SET status = 'deleting', delete_total = $4 \
                               WHERE company = $1 AND organization = $2 AND folder = $3"
            }
        };
        sqlx::query::<D>(own)
            .bind(company)
            .bind(organization)
            .bind(folder)
            .bind(total)
            .execute(&mut *c)
            .await?;
        if folder.is_empty() {
            let below = [
                "UPDATE analytics_organizations SET status = 'deleting' \
                 WHERE company = $1 AND ($2 = '' OR organization = $2)",
                "UPDATE analytics_folders SET status = 'deleting' \
                 WHERE company = $1 AND ($2 = '' OR organization = $2)",
            ];
            for sql in below {
                sqlx::query::<D>(sql)
                    .bind(company)
                    .bind(organization)
                    .execute(&mut *c)
                    .await?;
            }
        }
        Ok(())
    }

    pub(crate) async fn count_calls(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
    ) -> Result<i64, StoreError> {
        let sql = format!("SELECT COUNT(*) FROM analytics_calls WHERE {SCOPE}");
        Ok(sqlx::query_scalar::<D, i64>(&sql)
            .bind(company)
            .bind(organization)
            .bind(folder)
            .fetch_one(&mut *c)
            .await?)
    }

    pub(crate) async fn calls_in(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        limit: i64,
    ) -> Result<Vec<CallRow>, StoreError> {
        let sql = format!(
            "SELECT {CALL_COLUMNS} FROM analytics_calls WHERE {SCOPE} ORDER BY id LIMIT $4"
        );
        Ok(sqlx::query_as::<D, CallRow>(&sql)
            .bind(company)
            .bind(organization)
            .bind(folder)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?)
    }

    /// Removes the scope's folders, organizations and company rows (its calls are gone by then).
    pub(crate) async fn delete_scope_rows(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
    ) -> Result<(), StoreError> {
        let mut statements = vec![
            "DELETE FROM analytics_daily_agents WHERE company = $1 AND ($2 = '' OR organization = $2) \
             AND ($3 = '' OR folder = $3)",
            "DELETE FROM analytics_daily_scorecards WHERE company = $1 \
             AND ($2 = '' OR organization = $2) AND ($3 = '' OR folder = $3)",
            // Rows of the former layout not moved yet (written by an instance of an earlier version while
            // this one started): moved later, they would bring the deleted scope's sums back.
            "DELETE FROM analytics_daily_categories WHERE company = $1 \
             AND ($2 = '' OR organization = $2) AND ($3 = '' OR folder = $3)",
            "DELETE FROM analytics_folders WHERE company = $1 AND ($2 = '' OR organization = $2) \
             AND ($3 = '' OR folder = $3)",
        ];
        if folder.is_empty() {
            statements.push(
                "DELETE FROM analytics_organizations WHERE company = $1 AND ($2 = '' OR organization = $2) \
                 AND $3 = ''",
            );
        }
        if organization.is_empty() {
            statements
                .push("DELETE FROM analytics_apps WHERE company = $1 AND $2 = '' AND $3 = ''");
            statements
                .push("DELETE FROM analytics_companies WHERE company = $1 AND $2 = '' AND $3 = ''");
            // Its callback secrets are retired: a company made again under the name gets a new one.
            let now = common::time::now_rfc3339();
            Self::rotate_secret(&mut *c, company, &now, false).await?;
        }
        for sql in statements {
            sqlx::query::<D>(sql)
                .bind(company)
                .bind(organization)
                .bind(folder)
                .execute(&mut *c)
                .await?;
        }
        Ok(())
    }

    /// Inserts the calls, a statement per `ROWS_PER_STATEMENT`.
    pub(crate) async fn insert_calls(
        c: &mut D::Connection,
        rows: &[&CallRow],
    ) -> Result<(), StoreError> {
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO analytics_calls ({CALL_COLUMNS}) VALUES {}",
                tuples(chunk.len(), 10)
            );
            let mut query = sqlx::query::<D>(&sql);
            for row in chunk {
                query = query
                    .bind(&row.id)
                    .bind(&row.company)
                    .bind(&row.organization)
                    .bind(&row.folder)
                    .bind(&row.request_id)
                    .bind(&row.datetime)
                    .bind(&row.last_modified)
                    .bind(&row.filename)
                    .bind(&row.agent_id)
                    .bind(row.audio_seconds);
            }
            query
                .execute(&mut *c)
                .await
                .map_err(|e| StoreError::unique(e, format!("call {}", chunk[0].id)))?;
        }
        Ok(())
    }

    /// The calls among `ids` that exist, in the order of their ids; inside a transaction locked until it
    /// ends, in that order.
    pub(crate) async fn get_calls(
        c: &mut D::Connection,
        ids: &[&str],
    ) -> Result<Vec<CallRow>, StoreError> {
        Self::select_calls(c, ids, CALL_COLUMNS).await
    }

    pub(crate) async fn delete_calls(
        c: &mut D::Connection,
        ids: &[String],
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        // One statement per table for the whole batch (a deletion job's batch is 100 calls).
        let list = placeholders(1, ids.len());
        for sql in [
            format!("DELETE FROM analytics_call_metadata WHERE call_id IN ({list})"),
            format!("DELETE FROM analytics_call_scores WHERE call_id IN ({list})"),
            format!("DELETE FROM analytics_call_facts WHERE call_id IN ({list})"),
            format!("DELETE FROM analytics_calls WHERE id IN ({list})"),
        ] {
            let mut query = sqlx::query::<D>(&sql);
            for id in ids {
                query = query.bind(id);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }
}

/// The batch forms the statements of every `*_sql.rs` share: their bounds are the fewest, so that any
/// block of statements can call them.
impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
{
    /// `columns` of the calls among `ids` that exist, in the order of their ids; inside a transaction
    /// locked until it ends, in that order, so two transactions locking calls never wait for each other in
    /// turn.
    pub(crate) async fn select_calls<R>(
        c: &mut D::Connection,
        ids: &[&str],
        columns: &str,
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'r> sqlx::FromRow<'r, <D as sqlx::Database>::Row> + Send + Unpin,
    {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        Self::select_in(c, &ids, |list| {
            format!(
                "SELECT {columns} FROM analytics_calls WHERE id IN ({list}) ORDER BY id{for_update}", for_update = D::FOR_UPDATE)
        })
        .await
    }

    /// The rows of `sql(list)` for every `ROWS_PER_STATEMENT` of `ids`, in turn: `list` is the placeholders
    /// `$1, $2, ...` each id is bound to.
    pub(crate) async fn select_in<R>(
        c: &mut D::Connection,
        ids: &[&str],
        sql: impl Fn(&str) -> String,
    ) -> Result<Vec<R>, StoreError>
    where
        R: for<'r> sqlx::FromRow<'r, <D as sqlx::Database>::Row> + Send + Unpin,
    {
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let sql = sql(&placeholders(1, chunk.len()));
            let mut query = sqlx::query_as::<D, R>(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            found.extend(query.fetch_all(&mut *c).await?);
        }
        Ok(found)
    }

    /// Runs `sql(list)` for every `ROWS_PER_STATEMENT` of `ids`, as `select_in` does.
    pub(crate) async fn execute_in(
        c: &mut D::Connection,
        ids: &[&str],
        sql: impl Fn(&str) -> String,
    ) -> Result<(), StoreError> {
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let sql = sql(&placeholders(1, chunk.len()));
            let mut query = sqlx::query::<D>(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }
}
