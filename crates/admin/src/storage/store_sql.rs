// The admin store, written once and compiled for PostgreSQL and SQLite by `sql_adapters!`.

pub struct SqlAdminStore(pub Pool);

const AUDIT_COLUMNS: &str =
    "id, company, at_ms, actor, actor_id, action, resource_type, resource_id, version, changes";

#[async_trait]
impl AdminStore for SqlAdminStore {
    async fn insert_audit(&self, e: &AuditEntry) -> Result<i64, StoreError> {
        let id: i64 = sqlx::query_scalar::<Db, i64>(
            "INSERT INTO admin_audit_log (company, at_ms, actor, actor_id, action, resource_type, resource_id, \
             version, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
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
        .fetch_one(&self.0)
        .await?;
        Ok(id)
    }

    async fn list_audit(
        &self,
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
        let rows = sqlx::query_as::<Db, AuditRow>(&sql)
            .bind(company)
            .bind(before)
            .bind(&filter.resource_type)
            .bind(&filter.resource_id)
            .bind(&filter.actor)
            .bind(limit)
            .fetch_all(&self.0)
            .await?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    async fn revoke_user_refresh_tokens(&self, company: &str, user_id: &str, now_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE refresh_tokens SET revoked_ms = $3 WHERE company = $1 AND user_id = $2 AND revoked_ms IS NULL",
        )
        .bind(company)
        .bind(user_id)
        .bind(now_ms)
        .execute(&self.0)
        .await?;
        Ok(done.rows_affected())
    }

    async fn is_access_revoked(&self, jti: &str) -> Result<bool, StoreError> {
        let found = sqlx::query_scalar::<Db, i64>("SELECT CAST(1 AS BIGINT) FROM revoked_access_tokens WHERE jti = $1")
            .bind(jti)
            .fetch_optional(&self.0)
            .await?;
        Ok(found.is_some())
    }

    async fn add_rate_count(&self, account: &str, window_kind: &str, window_start: i64, delta: i64) -> Result<i64, StoreError> {
        let total = sqlx::query_scalar::<Db, i64>(
            "INSERT INTO admin_rate_counters (account, window_kind, window_start, count) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (account, window_kind, window_start) \
             DO UPDATE SET count = admin_rate_counters.count + excluded.count RETURNING count",
        )
        .bind(account)
        .bind(window_kind)
        .bind(window_start)
        .bind(delta)
        .fetch_one(&self.0)
        .await?;
        Ok(total)
    }

    async fn heartbeat(&self, replica_id: &str, now_ms: i64, alive_since_ms: i64) -> Result<i64, StoreError> {
        sqlx::query::<Db>(
            "INSERT INTO admin_replicas (replica_id, seen_ms) VALUES ($1, $2) \
             ON CONFLICT (replica_id) DO UPDATE SET seen_ms = excluded.seen_ms",
        )
        .bind(replica_id)
        .bind(now_ms)
        .execute(&self.0)
        .await?;
        let alive = sqlx::query_scalar::<Db, i64>("SELECT COUNT(*) FROM admin_replicas WHERE seen_ms >= $1")
            .bind(alive_since_ms)
            .fetch_one(&self.0)
            .await?;
        Ok(alive)
    }

    async fn purge_rate_state(&self, seconds_before: i64, days_before: i64, replicas_before_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "DELETE FROM admin_rate_counters WHERE (window_kind = 's' AND window_start < $1) \
             OR (window_kind = 'd' AND window_start < $2)",
        )
        .bind(seconds_before)
        .bind(days_before)
        .execute(&self.0)
        .await?;
        sqlx::query::<Db>("DELETE FROM admin_replicas WHERE seen_ms < $1")
            .bind(replicas_before_ms)
            .execute(&self.0)
            .await?;
        Ok(())
    }
}
