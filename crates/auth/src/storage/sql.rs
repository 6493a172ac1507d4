//! The token service's statements, written once for both databases. Each function runs all its statements on the connection it is given.

use common::db::{Binds, Dialect, Reads, StoreError};

use super::{CodeRecord, CodeUse, LiveAccessToken, RefreshRecord, SessionRecord, SigningKeyRecord};

const CODE_COLUMNS: &str =
    "code_hash, company, client_id, user_id, redirect_uri, scope, requested_refresh, nonce, \
    code_challenge, auth_time_ms, session_id, family_id, expires_ms, used_ms, access_jti";

const REFRESH_COLUMNS: &str =
    "token_hash, family_id, company, client_id, user_id, scope, auth_time_ms, access_jti, \
    access_exp_ms, created_ms, expires_ms, used_ms, revoked_ms";

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<i64>: Binds<'q, D>,
    for<'q> Option<&'q str>: Binds<'q, D>,
    for<'q> Option<String>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    for<'q> Vec<u8>: Binds<'q, D>,
    (Option<i64>,): Reads<D>,
    CodeRecord: Reads<D>,
    LiveAccessToken: Reads<D>,
    RefreshRecord: Reads<D>,
    SessionRecord: Reads<D>,
    SigningKeyRecord: Reads<D>,
{
    pub(crate) async fn signing_keys(
        c: &mut D::Connection,
        company: &str,
    ) -> Result<Vec<SigningKeyRecord>, StoreError> {
        Ok(sqlx::query_as::<D, SigningKeyRecord>(
            "SELECT kid, company, alg, sealed_private, public_jwk, created_ms, retired_ms FROM signing_keys \
             WHERE company = $1 ORDER BY created_ms",
        )
        .bind(company)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn insert_signing_key(
        c: &mut D::Connection,
        k: &SigningKeyRecord,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
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
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn retire_signing_keys(
        c: &mut D::Connection,
        company: &str,
        alg: Option<&str>,
        at_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE signing_keys SET retired_ms = $3 WHERE company = $1 AND retired_ms IS NULL AND ($2 IS NULL OR alg = $2)",
        )
        .bind(company)
        .bind(alg)
        .bind(at_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn delete_keys_retired_before(
        c: &mut D::Connection,
        company: &str,
        before_ms: i64,
    ) -> Result<u64, StoreError> {
        let done =
            sqlx::query::<D>("DELETE FROM signing_keys WHERE company = $1 AND retired_ms < $2")
                .bind(company)
                .bind(before_ms)
                .execute(&mut *c)
                .await?;
        Ok(D::rows_affected(&done))
    }

    pub(crate) async fn insert_code(
        c: &mut D::Connection,
        code: &CodeRecord,
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO auth_codes ({CODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        );
        sqlx::query::<D>(&sql)
            .bind(&code.code_hash)
            .bind(&code.company)
            .bind(&code.client_id)
            .bind(&code.user_id)
            .bind(&code.redirect_uri)
            .bind(&code.scope)
            .bind(code.requested_refresh)
            .bind(&code.nonce)
            .bind(&code.code_challenge)
            .bind(code.auth_time_ms)
            .bind(&code.session_id)
            .bind(&code.family_id)
            .bind(code.expires_ms)
            .bind(code.used_ms)
            .bind(&code.access_jti)
            .execute(&mut *c)
            .await?;
        Ok(())
    }

    pub(crate) async fn use_code(
        c: &mut D::Connection,
        code_hash: &str,
        now_ms: i64,
        company: &str,
        client_id: &str,
    ) -> Result<CodeUse, StoreError> {
        // One statement decides who uses the code first, so two concurrent exchanges cannot both win; only
        // the client the code was issued to can spend it.
        let claimed = sqlx::query::<D>(
            "UPDATE auth_codes SET used_ms = $2 WHERE code_hash = $1 AND used_ms IS NULL \
             AND company = $3 AND client_id = $4",
        )
        .bind(code_hash)
        .bind(now_ms)
        .bind(company)
        .bind(client_id)
        .execute(&mut *c)
        .await?;
        let first = D::rows_affected(&claimed) == 1;
        let sql = format!("SELECT {CODE_COLUMNS} FROM auth_codes WHERE code_hash = $1");
        let record = sqlx::query_as::<D, CodeRecord>(&sql)
            .bind(code_hash)
            .fetch_optional(&mut *c)
            .await?;
        Ok(match (record, first) {
            (Some(r), _) if r.company != company || r.client_id != client_id => {
                CodeUse::OtherClient
            }
            (Some(r), true) => CodeUse::First(r),
            (Some(r), false) => CodeUse::Replay(r),
            (None, _) => CodeUse::Unknown,
        })
    }

    pub(crate) async fn set_code_access_jti(
        c: &mut D::Connection,
        code_hash: &str,
        jti: &str,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>("UPDATE auth_codes SET access_jti = $2 WHERE code_hash = $1")
            .bind(code_hash)
            .bind(jti)
            .execute(&mut *c)
            .await?;
        Ok(())
    }

    pub(crate) async fn mark_code_replayed(
        c: &mut D::Connection,
        code_hash: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE auth_codes SET replayed_ms = $2 WHERE code_hash = $1 AND replayed_ms IS NULL",
        )
        .bind(code_hash)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn code_replayed(
        c: &mut D::Connection,
        code_hash: &str,
    ) -> Result<bool, StoreError> {
        let replayed = sqlx::query_scalar::<D, Option<i64>>(
            "SELECT replayed_ms FROM auth_codes WHERE code_hash = $1",
        )
        .bind(code_hash)
        .fetch_optional(&mut *c)
        .await?;
        Ok(matches!(replayed, Some(Some(_))))
    }

    pub(crate) async fn insert_refresh(
        c: &mut D::Connection,
        t: &RefreshRecord,
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO refresh_tokens ({REFRESH_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        );
        sqlx::query::<D>(&sql)
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
            .execute(&mut *c)
            .await?;
        Ok(())
    }

    pub(crate) async fn get_refresh(
        c: &mut D::Connection,
        token_hash: &str,
    ) -> Result<Option<RefreshRecord>, StoreError> {
        let sql = format!("SELECT {REFRESH_COLUMNS} FROM refresh_tokens WHERE token_hash = $1");
        Ok(sqlx::query_as::<D, RefreshRecord>(&sql)
            .bind(token_hash)
            .fetch_optional(&mut *c)
            .await?)
    }

    pub(crate) async fn rotate_refresh(
        c: &mut D::Connection,
        token_hash: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE refresh_tokens SET used_ms = $2 WHERE token_hash = $1 AND used_ms IS NULL AND revoked_ms IS NULL",
        )
        .bind(token_hash)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn family_live_access_tokens(
        c: &mut D::Connection,
        family_id: &str,
        now_ms: i64,
    ) -> Result<Vec<LiveAccessToken>, StoreError> {
        Ok(sqlx::query_as::<D, LiveAccessToken>(
            "SELECT access_jti AS jti, company, access_exp_ms AS expires_ms FROM refresh_tokens \
             WHERE family_id = $1 AND access_jti IS NOT NULL AND access_exp_ms > $2",
        )
        .bind(family_id)
        .bind(now_ms)
        .fetch_all(&mut *c)
        .await?)
    }

    /// The number of tokens marked (those not revoked before).
    pub(crate) async fn mark_family_revoked(
        c: &mut D::Connection,
        family_id: &str,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE refresh_tokens SET revoked_ms = $2 WHERE family_id = $1 AND revoked_ms IS NULL",
        )
        .bind(family_id)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done))
    }

    pub(crate) async fn revoke_user_tokens(
        c: &mut D::Connection,
        company: &str,
        user_id: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE refresh_tokens SET revoked_ms = $3 WHERE company = $1 AND user_id = $2 AND revoked_ms IS NULL",
        )
        .bind(company)
        .bind(user_id)
        .bind(now_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn insert_session(
        c: &mut D::Connection,
        s: &SessionRecord,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO login_sessions (id_hash, company, user_id, auth_time_ms, expires_ms) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&s.id_hash)
        .bind(&s.company)
        .bind(&s.user_id)
        .bind(s.auth_time_ms)
        .bind(s.expires_ms)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn get_session(
        c: &mut D::Connection,
        id_hash: &str,
    ) -> Result<Option<SessionRecord>, StoreError> {
        Ok(sqlx::query_as::<D, SessionRecord>(
            "SELECT id_hash, company, user_id, auth_time_ms, expires_ms FROM login_sessions WHERE id_hash = $1",
        )
        .bind(id_hash)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn delete_session(
        c: &mut D::Connection,
        id_hash: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>("DELETE FROM login_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .execute(&mut *c)
            .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn purge_expired(
        c: &mut D::Connection,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        for sql in [
            "DELETE FROM auth_codes WHERE expires_ms < $1 - 86400000",
            "DELETE FROM login_sessions WHERE expires_ms < $1",
            "DELETE FROM refresh_tokens WHERE expires_ms IS NOT NULL AND expires_ms < $1",
        ] {
            sqlx::query::<D>(sql).bind(now_ms).execute(&mut *c).await?;
        }
        Ok(())
    }
}
