// The token store, written once and compiled for PostgreSQL and SQLite by `sql_adapters!`.

pub struct SqlTokenStore(pub Pool);

const CODE_COLUMNS: &str = "code_hash, company, client_id, user_id, redirect_uri, scope, requested_refresh, nonce, \
    code_challenge, auth_time_ms, session_id, family_id, expires_ms, used_ms, access_jti";
const REFRESH_COLUMNS: &str = "token_hash, family_id, company, client_id, user_id, scope, auth_time_ms, access_jti, \
    access_exp_ms, created_ms, expires_ms, used_ms, revoked_ms";

#[async_trait]
impl TokenStore for SqlTokenStore {
    async fn company_exists(&self, company: &str) -> Result<bool, StoreError> {
        let row = sqlx::query_scalar::<Db, i32>("SELECT 1 FROM companies WHERE id = $1")
            .bind(company)
            .fetch_optional(&self.0)
            .await?;
        Ok(row.is_some())
    }

    async fn signing_keys(&self, company: &str) -> Result<Vec<SigningKeyRecord>, StoreError> {
        Ok(sqlx::query_as::<Db, SigningKeyRecord>(
            "SELECT kid, company, alg, sealed_private, public_jwk, created_ms, retired_ms FROM signing_keys \
             WHERE company = $1 ORDER BY created_ms",
        )
        .bind(company)
        .fetch_all(&self.0)
        .await?)
    }

    async fn insert_signing_key(&self, k: &SigningKeyRecord) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "INSERT INTO signing_keys (kid, company, alg, sealed_private, public_jwk, created_ms, retired_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&k.kid)
        .bind(&k.company)
        .bind(&k.alg)
        .bind(&k.sealed_private)
        .bind(&k.public_jwk)
        .bind(k.created_ms)
        .bind(k.retired_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn retire_signing_keys(&self, company: &str, alg: Option<&str>, at_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "UPDATE signing_keys SET retired_ms = $3 WHERE company = $1 AND retired_ms IS NULL AND ($2 IS NULL OR alg = $2)",
        )
        .bind(company)
        .bind(alg)
        .bind(at_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn delete_keys_retired_before(&self, company: &str, before_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query::<Db>("DELETE FROM signing_keys WHERE company = $1 AND retired_ms < $2")
            .bind(company)
            .bind(before_ms)
            .execute(&self.0)
            .await?;
        Ok(done.rows_affected())
    }

    async fn insert_code(&self, c: &CodeRecord) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO auth_codes ({CODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        );
        sqlx::query::<Db>(&sql)
            .bind(&c.code_hash)
            .bind(&c.company)
            .bind(&c.client_id)
            .bind(&c.user_id)
            .bind(&c.redirect_uri)
            .bind(&c.scope)
            .bind(c.requested_refresh)
            .bind(&c.nonce)
            .bind(&c.code_challenge)
            .bind(c.auth_time_ms)
            .bind(&c.session_id)
            .bind(&c.family_id)
            .bind(c.expires_ms)
            .bind(c.used_ms)
            .bind(&c.access_jti)
            .execute(&self.0)
            .await?;
        Ok(())
    }

    async fn use_code(&self, code_hash: &str, now_ms: i64) -> Result<CodeUse, StoreError> {
        // One statement decides who uses the code first, so two concurrent exchanges cannot both win.
        let first = sqlx::query::<Db>("UPDATE auth_codes SET used_ms = $2 WHERE code_hash = $1 AND used_ms IS NULL")
            .bind(code_hash)
            .bind(now_ms)
            .execute(&self.0)
            .await?
            .rows_affected()
            == 1;
        let sql = format!("SELECT {CODE_COLUMNS} FROM auth_codes WHERE code_hash = $1");
        let record = sqlx::query_as::<Db, CodeRecord>(&sql).bind(code_hash).fetch_optional(&self.0).await?;
        Ok(match (record, first) {
            (Some(r), true) => CodeUse::First(r),
            (Some(r), false) => CodeUse::Replay(r),
            (None, _) => CodeUse::Unknown,
        })
    }

    async fn set_code_access_jti(&self, code_hash: &str, jti: &str) -> Result<(), StoreError> {
        sqlx::query::<Db>("UPDATE auth_codes SET access_jti = $2 WHERE code_hash = $1")
            .bind(code_hash)
            .bind(jti)
            .execute(&self.0)
            .await?;
        Ok(())
    }

    async fn mark_code_replayed(&self, code_hash: &str, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<Db>("UPDATE auth_codes SET replayed_ms = $2 WHERE code_hash = $1 AND replayed_ms IS NULL")
            .bind(code_hash)
            .bind(now_ms)
            .execute(&self.0)
            .await?;
        Ok(())
    }

    async fn code_replayed(&self, code_hash: &str) -> Result<bool, StoreError> {
        let replayed = sqlx::query_scalar::<Db, Option<i64>>("SELECT replayed_ms FROM auth_codes WHERE code_hash = $1")
            .bind(code_hash)
            .fetch_optional(&self.0)
            .await?;
        Ok(matches!(replayed, Some(Some(_))))
    }

    async fn insert_refresh(&self, t: &RefreshRecord) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO refresh_tokens ({REFRESH_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        );
        sqlx::query::<Db>(&sql)
            .bind(&t.token_hash)
            .bind(&t.family_id)
            .bind(&t.company)
            .bind(&t.client_id)
            .bind(&t.user_id)
            .bind(&t.scope)
            .bind(t.auth_time_ms)
            .bind(&t.access_jti)
            .bind(t.access_exp_ms)
            .bind(t.created_ms)
            .bind(t.expires_ms)
            .bind(t.used_ms)
            .bind(t.revoked_ms)
            .execute(&self.0)
            .await?;
        Ok(())
    }

    async fn get_refresh(&self, token_hash: &str) -> Result<Option<RefreshRecord>, StoreError> {
        let sql = format!("SELECT {REFRESH_COLUMNS} FROM refresh_tokens WHERE token_hash = $1");
        Ok(sqlx::query_as::<Db, RefreshRecord>(&sql).bind(token_hash).fetch_optional(&self.0).await?)
    }

    async fn rotate_refresh(&self, token_hash: &str, now_ms: i64) -> Result<bool, StoreError> {
        let done = sqlx::query::<Db>(
            "UPDATE refresh_tokens SET used_ms = $2 WHERE token_hash = $1 AND used_ms IS NULL AND revoked_ms IS NULL",
        )
        .bind(token_hash)
        .bind(now_ms)
        .execute(&self.0)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn revoke_family(&self, family_id: &str, now_ms: i64) -> Result<(), StoreError> {
        let mut tx = self.0.begin().await?;
        // Deny the access tokens that are still live before marking the family revoked.
        sqlx::query::<Db>(
            "INSERT INTO revoked_access_tokens (jti, company, expires_ms) \
             SELECT access_jti, company, access_exp_ms FROM refresh_tokens \
             WHERE family_id = $1 AND access_jti IS NOT NULL AND access_exp_ms > $2 \
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(family_id)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        sqlx::query::<Db>("UPDATE refresh_tokens SET revoked_ms = $2 WHERE family_id = $1 AND revoked_ms IS NULL")
            .bind(family_id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn revoke_user_tokens(&self, company: &str, user_id: &str, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "UPDATE refresh_tokens SET revoked_ms = $3 WHERE company = $1 AND user_id = $2 AND revoked_ms IS NULL",
        )
        .bind(company)
        .bind(user_id)
        .bind(now_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn revoke_access(&self, jti: &str, company: &str, expires_ms: i64) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "INSERT INTO revoked_access_tokens (jti, company, expires_ms) VALUES ($1, $2, $3) ON CONFLICT (jti) DO NOTHING",
        )
        .bind(jti)
        .bind(company)
        .bind(expires_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn is_access_revoked(&self, jti: &str) -> Result<bool, StoreError> {
        let row = sqlx::query_scalar::<Db, i32>("SELECT 1 FROM revoked_access_tokens WHERE jti = $1")
            .bind(jti)
            .fetch_optional(&self.0)
            .await?;
        Ok(row.is_some())
    }

    async fn insert_session(&self, s: &SessionRecord) -> Result<(), StoreError> {
        sqlx::query::<Db>(
            "INSERT INTO login_sessions (id_hash, company, user_id, auth_time_ms, expires_ms) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&s.id_hash)
        .bind(&s.company)
        .bind(&s.user_id)
        .bind(s.auth_time_ms)
        .bind(s.expires_ms)
        .execute(&self.0)
        .await?;
        Ok(())
    }

    async fn get_session(&self, id_hash: &str) -> Result<Option<SessionRecord>, StoreError> {
        Ok(sqlx::query_as::<Db, SessionRecord>(
            "SELECT id_hash, company, user_id, auth_time_ms, expires_ms FROM login_sessions WHERE id_hash = $1",
        )
        .bind(id_hash)
        .fetch_optional(&self.0)
        .await?)
    }

    async fn purge_expired(&self, now_ms: i64) -> Result<(), StoreError> {
        for sql in [
            "DELETE FROM auth_codes WHERE expires_ms < $1 - 86400000",
            "DELETE FROM login_sessions WHERE expires_ms < $1",
            "DELETE FROM revoked_access_tokens WHERE expires_ms < $1",
            "DELETE FROM refresh_tokens WHERE expires_ms IS NOT NULL AND expires_ms < $1",
        ] {
            sqlx::query::<Db>(sql).bind(now_ms).execute(&self.0).await?;
        }
        Ok(())
    }
}
