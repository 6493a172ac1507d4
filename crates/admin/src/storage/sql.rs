//! The administration service's statements, written once for both databases.

use common::db::{Binds, Dialect, Reads, StoreError};

use super::{AuditEntry, AuditFilter, AuditRow};

const AUDIT_COLUMNS: &str =
    "id, company, at_ms, actor, actor_id, action, resource_type, resource_id, version, changes";

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<i64>: Binds<'q, D>,
    for<'q> Option<String>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (i64,): Reads<D>,
    AuditRow: Reads<D>,
{
    pub(crate) async fn insert_audit(
        c: &mut D::Connection,
        e: &AuditEntry,
    ) -> Result<i64, StoreError> {
        let id: i64 = sqlx::query_scalar::<D, i64>(
            "INSERT INTO admin_audit_log (company, at_ms, actor, actor_id, action, resource_type, \
             resource_id, version, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
        )
        .bind(&e.company)
        .bind(e.at.timestamp_millis())
        .bind(&e.actor)
        .bind(&e.actor_id)
        .bind(&e.action)
        .bind(&e.resource_type)
        .bind(&e.resource_id)
        .bind(e.version)
        .bind(e.changes.to_string())
        .fetch_one(&mut *c)
        .await?;
        Ok(id)
    }

    pub(crate) async fn list_audit(
        c: &mut D::Connection,
        company: &str,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let sql = format!(
            "SELECT {AUDIT_COLUMNS} FROM admin_audit_log WHERE company = $1 AND ($2 IS NULL OR id < $2) \
             AND ($3 IS NULL OR resource_type = $3) AND ($4 IS NULL OR resource_id = $4) \
             AND ($5 IS NULL OR actor = $5) ORDER BY id DESC LIMIT $6"
        );
        let rows = sqlx::query_as::<D, AuditRow>(&sql)
            .bind(company)
            .bind(before)
            .bind(&filter.resource_type)
            .bind(&filter.resource_id)
            .bind(&filter.actor)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    pub(crate) async fn add_rate_count(
        c: &mut D::Connection,
        account: &str,
        window_kind: &str,
        window_start: i64,
        delta: i64,
    ) -> Result<i64, StoreError> {
        let total = sqlx::query_scalar::<D, i64>(
            "INSERT INTO admin_rate_counters (account, window_kind, window_start, count) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (account, window_kind, window_start) \
             DO UPDATE SET count = admin_rate_counters.count + excluded.count RETURNING count",
        )
        .bind(account)
        .bind(window_kind)
        .bind(window_start)
        .bind(delta)
        .fetch_one(&mut *c)
        .await?;
        Ok(total)
    }

    pub(crate) async fn heartbeat(
        c: &mut D::Connection,
        replica_id: &str,
        now_ms: i64,
        alive_since_ms: i64,
    ) -> Result<i64, StoreError> {
        sqlx::query::<D>(
            "INSERT INTO admin_replicas (replica_id, seen_ms) VALUES ($1, $2) \
             ON CONFLICT (replica_id) DO UPDATE SET seen_ms = excluded.seen_ms",
        )
        .bind(replica_id)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        let alive =
            sqlx::query_scalar::<D, i64>("SELECT COUNT(*) FROM admin_replicas WHERE seen_ms >= $1")
                .bind(alive_since_ms)
                .fetch_one(&mut *c)
                .await?;
        Ok(alive)
    }

    pub(crate) async fn purge_rate_state(
        c: &mut D::Connection,
        seconds_before: i64,
        days_before: i64,
        replicas_before_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "DELETE FROM admin_rate_counters WHERE (window_kind = 's' AND window_start < $1) \
             OR (window_kind = 'd' AND window_start < $2)",
        )
        .bind(seconds_before)
        .bind(days_before)
        .execute(&mut *c)
        .await?;
        sqlx::query::<D>("DELETE FROM admin_replicas WHERE seen_ms < $1")
            .bind(replicas_before_ms)
            .execute(&mut *c)
            .await?;
        Ok(())
    }
}
