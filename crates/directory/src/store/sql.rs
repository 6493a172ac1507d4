//! The directory's statements, written once for both databases. Placeholders are `$1`, `$2`, ..., which
//! both understand. Each function runs all its statements on the one connection it is given.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use common::db::{Binds, Dialect, Probe, ProbeArgument, Reads, StoreError};

use super::arguments::{LoginPolicy, RoleFilter, UserFilter};
use super::rows::{self, to_json, ClientRow, CompanyRow, RoleRow, UserRow, ROLE_SEPARATOR};
use crate::model::*;

const USER_COLUMNS: &str = "id, company, username, first_name, last_name, salutation, email, phone, \
    automatic_update, excluded_from_user_activity, company_account_id, login_blocked, login_blocked_reason, \
    api_access, status, data_access, links, password_hash, password_last_set, password_last_emailed, \
    password_not_set_reason, created_on, created_by, modified_on, modified_by, last_login, login_count, \
    failed_login_count, locked_until_ms, sessions_valid_after_ms, version";

/// The user columns and, as `roles`, the user's role names in order, primary first.
static USER_SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {USER_COLUMNS}, (SELECT string_agg(ur.role, '{ROLE_SEPARATOR}' ORDER BY ur.position) \
         FROM user_roles ur WHERE ur.user_id = users.id) AS roles FROM users"
    )
});

const CLIENT_COLUMNS: &str = "client_id, company, name, secret_hash, grant_types, redirect_uris, scopes, \
    issue_refresh_token, access_token_ttl, refresh_token_ttl, secret_rotated_on, admin_access, created_on, \
    created_by, modified_on, modified_by, version";

const ROLE_COLUMNS: &str =
    "company, name, description, permissions, created_on, created_by, modified_on, modified_by, version";

/// The statement of `get_user`.
pub(crate) fn get_user_sql() -> &'static str {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("{} WHERE company = $1 AND username = $2", *USER_SELECT));
    &SQL
}

/// The statement of `get_user_with_permissions`: one row per role of the user (one with NULL role columns
/// when it has none), each with the user's columns, the role's name as `roles`, its place and its
/// permissions column, and as `probe` the value of the probe (its arguments from `$3` on) or false. Plain index lookups and no
/// aggregate: on PostgreSQL, setting up the two aggregating subqueries this replaced (a sort for the
/// ordered one) cost as much as running the statement.
pub(crate) fn user_with_permissions_sql(probe: Option<&Probe<'_>>) -> String {
    static COLUMNS: LazyLock<String> = LazyLock::new(|| {
        USER_COLUMNS
            .split(", ")
            .map(|c| format!("u.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    });
    format!(
        "SELECT {}, ur.role AS roles, ur.position AS position, r.permissions AS permissions, \
         {} AS probe FROM users u \
         LEFT JOIN user_roles ur ON ur.user_id = u.id \
         LEFT JOIN roles r ON r.company = ur.company AND r.name = ur.role \
         WHERE u.company = $1 AND u.id = $2",
        *COLUMNS,
        probe.map_or_else(|| "FALSE".to_string(), |p| p.sql(3))
    )
}

fn stale_unless_one(rows_affected: u64) -> Result<(), StoreError> {
    if rows_affected == 1 {
        Ok(())
    } else {
        Err(StoreError::Stale)
    }
}

/// The statements, for either database (`dispatch!` picks one).
pub(crate) struct Statements<D>(std::marker::PhantomData<D>);

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> DateTime<Utc>: Binds<'q, D>,
    for<'q> i32: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<DateTime<Utc>>: Binds<'q, D>,
    for<'q> Option<i64>: Binds<'q, D>,
    for<'q> Option<&'q str>: Binds<'q, D>,
    for<'q> Option<String>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (i64,): Reads<D>,
    (String,): Reads<D>,
    ClientRow: Reads<D>,
    CompanyRow: Reads<D>,
    RoleRow: Reads<D>,
    rows::UserPermissionsRow: Reads<D>,
    UserRow: Reads<D>,
{
    pub(crate) async fn get_company(
        c: &mut D::Connection,
        id: &str,
    ) -> Result<Option<Company>, StoreError> {
        let row = sqlx::query_as::<D, CompanyRow>(
            "SELECT id, name, created_on FROM companies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&mut *c)
        .await?;
        Ok(row.map(Company::from))
    }

    pub(crate) async fn ensure_company(
        c: &mut D::Connection,
        company: &Company,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "INSERT INTO companies (id, name, created_on) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(&company.id)
        .bind(&company.name)
        .bind(company.created_on)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn get_role(
        c: &mut D::Connection,
        company: &str,
        name: &str,
    ) -> Result<Option<Role>, StoreError> {
        let sql = format!("SELECT {ROLE_COLUMNS} FROM roles WHERE company = $1 AND name = $2");
        let row = sqlx::query_as::<D, RoleRow>(&sql)
            .bind(company)
            .bind(name)
            .fetch_optional(&mut *c)
            .await?;
        Ok(row.map(Role::from))
    }

    pub(crate) async fn insert_role(c: &mut D::Connection, role: &Role) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "INSERT INTO roles (company, name, description, permissions, created_on, created_by, \
             modified_on, modified_by, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&role.company)
        .bind(&role.name)
        .bind(&role.description)
        .bind(to_json(&role.permissions))
        .bind(role.created_on)
        .bind(&role.created_by)
        .bind(role.modified_on)
        .bind(&role.modified_by)
        .bind(role.version)
        .execute(&mut *c)
        .await
        .map_err(|e| StoreError::unique(e, format!("role {}", role.name)))?;
        Ok(())
    }

    pub(crate) async fn update_role(c: &mut D::Connection, role: &Role) -> Result<(), StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE roles SET description = $3, permissions = $4, modified_on = $5, modified_by = $6, \
             version = $7 WHERE company = $1 AND name = $2 AND version = $8",
        )
        .bind(&role.company)
        .bind(&role.name)
        .bind(&role.description)
        .bind(to_json(&role.permissions))
        .bind(role.modified_on)
        .bind(&role.modified_by)
        .bind(role.version)
        .bind(role.version - 1)
        .execute(&mut *c)
        .await?;
        stale_unless_one(D::rows_affected(&done))
    }

    pub(crate) async fn delete_role_if_version(
        c: &mut D::Connection,
        company: &str,
        name: &str,
        version: i64,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query::<D>("DELETE FROM roles WHERE company = $1 AND name = $2 AND version = $3")
                .bind(company)
                .bind(name)
                .bind(version)
                .execute(&mut *c)
                .await
                .map_err(|e| {
                    StoreError::referenced(e, format!("role {name} is still held by users"))
                })?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn list_roles(
        c: &mut D::Connection,
        company: &str,
        filter: &RoleFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Role>, StoreError> {
        let sql = format!(
            "SELECT {ROLE_COLUMNS} FROM roles WHERE company = $1 AND ($2 IS NULL OR name > $2) \
             AND ($3 IS NULL OR name = $3) \
             AND ($4 IS NULL OR EXISTS (SELECT 1 FROM user_roles ur JOIN users u ON u.id = ur.user_id \
                  WHERE ur.company = roles.company AND ur.role = roles.name AND u.status = $4)) \
             ORDER BY name LIMIT $5"
        );
        let rows = sqlx::query_as::<D, RoleRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(&filter.name)
            .bind(&filter.held_by_status)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?;
        Ok(rows.into_iter().map(Role::from).collect())
    }

    pub(crate) async fn permissions_of_roles(
        c: &mut D::Connection,
        company: &str,
        roles: &[&str],
    ) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = Vec::new();
        for role in roles {
            let text = sqlx::query_scalar::<D, String>(
                "SELECT permissions FROM roles WHERE company = $1 AND name = $2",
            )
            .bind(company)
            .bind(role)
            .fetch_optional(&mut *c)
            .await?;
            for p in text.as_deref().map(rows::permissions).unwrap_or_default() {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Ok(out)
    }

    pub(crate) async fn get_user(
        c: &mut D::Connection,
        company: &str,
        username: &str,
    ) -> Result<Option<User>, StoreError> {
        let row = sqlx::query_as::<D, UserRow>(get_user_sql())
            .bind(company)
            .bind(username)
            .fetch_optional(&mut *c)
            .await?;
        Ok(row.map(User::from))
    }

    pub(crate) async fn get_user_by_id(
        c: &mut D::Connection,
        company: &str,
        id: &str,
    ) -> Result<Option<User>, StoreError> {
        let sql = format!("{} WHERE company = $1 AND id = $2", *USER_SELECT);
        let row = sqlx::query_as::<D, UserRow>(&sql)
            .bind(company)
            .bind(id)
            .fetch_optional(&mut *c)
            .await?;
        Ok(row.map(User::from))
    }

    /// The user, the permissions columns of its roles and, when `probe` is given, the value of that condition
    /// on another owner's table, all in one statement (one round trip on the administration API's hot path).
    pub(crate) async fn get_user_with_permissions(
        c: &mut D::Connection,
        company: &str,
        id: &str,
        probe: Option<&Probe<'_>>,
    ) -> Result<Option<UserAccess>, StoreError> {
        let sql = user_with_permissions_sql(probe);
        let mut query = sqlx::query_as::<D, rows::UserPermissionsRow>(&sql)
            .bind(company)
            .bind(id);
        for argument in probe.map_or(&[][..], |p| &p.arguments) {
            query = match *argument {
                ProbeArgument::Text(text) => query.bind(text),
                ProbeArgument::Integer(number) => query.bind(number),
            };
        }
        let rows = query.fetch_all(&mut *c).await?;
        Ok(rows::UserPermissionsRow::fold(rows))
    }

    /// Replaces the user's role rows with its primary and extra roles, in order.
    async fn write_roles(c: &mut D::Connection, u: &User) -> Result<(), StoreError> {
        sqlx::query::<D>("DELETE FROM user_roles WHERE user_id = $1")
            .bind(&u.id)
            .execute(&mut *c)
            .await?;
        for (position, role) in u.roles().enumerate() {
            sqlx::query::<D>(
                "INSERT INTO user_roles (user_id, company, role, position) VALUES ($1, $2, $3, $4)",
            )
            .bind(&u.id)
            .bind(&u.company)
            .bind(role)
            .bind(position as i32)
            .execute(&mut *c)
            .await
            .map_err(|e| match StoreError::referenced(e, "") {
                StoreError::InUse(_) => StoreError::NotFound(format!("role {role}")),
                other => other,
            })?;
        }
        Ok(())
    }

    pub(crate) async fn insert_user(c: &mut D::Connection, u: &User) -> Result<(), StoreError> {
        // Unique without regard to case (usernames are ASCII); the exact name is left to the unique key.
        if let Some(lock) = D::KEY_LOCK {
            sqlx::query::<D>(lock)
                .bind(format!(
                    "users {} {}",
                    u.company,
                    u.username.to_ascii_lowercase()
                ))
                .execute(&mut *c)
                .await?;
        }
        let alike: Option<String> = sqlx::query_scalar::<D, String>(
            "SELECT username FROM users WHERE company = $1 AND lower(username) = lower($2) \
             AND username <> $2 LIMIT 1",
        )
        .bind(&u.company)
        .bind(&u.username)
        .fetch_optional(&mut *c)
        .await?;
        if let Some(existing) = alike {
            return Err(StoreError::Conflict(format!(
                "user {existing}, which differs from {} only in case,",
                u.username
            )));
        }
        let sql = format!(
            "INSERT INTO users ({USER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
             $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)"
        );
        sqlx::query::<D>(&sql)
            .bind(&u.id)
            .bind(&u.company)
            .bind(&u.username)
            .bind(&u.first_name)
            .bind(&u.last_name)
            .bind(&u.salutation)
            .bind(&u.email)
            .bind(&u.phone)
            .bind(u.automatic_update)
            .bind(u.excluded_from_user_activity)
            .bind(&u.company_account_id)
            .bind(u.login_blocked)
            .bind(&u.login_blocked_reason)
            .bind(u.api_access)
            .bind(&u.status)
            .bind(to_json(&u.data_access))
            .bind(u.links.as_ref().map(to_json))
            .bind(&u.password_hash)
            .bind(u.password_last_set)
            .bind(u.password_last_emailed)
            .bind(&u.password_not_set_reason)
            .bind(u.created_on)
            .bind(&u.created_by)
            .bind(u.modified_on)
            .bind(&u.modified_by)
            .bind(u.last_login)
            .bind(u.login_count)
            .bind(u.failed_login_count)
            .bind(u.locked_until_ms)
            .bind(u.sessions_valid_after_ms)
            .bind(u.version)
            .execute(&mut *c)
            .await
            .map_err(|e| StoreError::unique(e, format!("user {}", u.username)))?;
        Self::write_roles(c, u).await
    }

    pub(crate) async fn update_user(c: &mut D::Connection, u: &User) -> Result<(), StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE users SET first_name = $3, last_name = $4, salutation = $5, email = $6, phone = $7, \
             automatic_update = $8, excluded_from_user_activity = $9, company_account_id = $10, \
             login_blocked = $11, login_blocked_reason = $12, api_access = $13, status = $14, \
             data_access = $15, links = $16, password_last_emailed = $17, password_not_set_reason = $18, \
             modified_on = $19, modified_by = $20, sessions_valid_after_ms = $21, version = $22 \
             WHERE company = $1 AND id = $2 AND version = $23",
        )
        .bind(&u.company)
        .bind(&u.id)
        .bind(&u.first_name)
        .bind(&u.last_name)
        .bind(&u.salutation)
        .bind(&u.email)
        .bind(&u.phone)
        .bind(u.automatic_update)
        .bind(u.excluded_from_user_activity)
        .bind(&u.company_account_id)
        .bind(u.login_blocked)
        .bind(&u.login_blocked_reason)
        .bind(u.api_access)
        .bind(&u.status)
        .bind(to_json(&u.data_access))
        .bind(u.links.as_ref().map(to_json))
        .bind(u.password_last_emailed)
        .bind(&u.password_not_set_reason)
        .bind(u.modified_on)
        .bind(&u.modified_by)
        .bind(u.sessions_valid_after_ms)
        .bind(u.version)
        .bind(u.version - 1)
        .execute(&mut *c)
        .await?;
        stale_unless_one(D::rows_affected(&done))?;
        Self::write_roles(c, u).await
    }

    pub(crate) async fn delete_user_if_version(
        c: &mut D::Connection,
        company: &str,
        username: &str,
        version: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "DELETE FROM users WHERE company = $1 AND username = $2 AND version = $3",
        )
        .bind(company)
        .bind(username)
        .bind(version)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn list_users(
        c: &mut D::Connection,
        company: &str,
        filter: &UserFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<User>, StoreError> {
        let sql = format!(
            "{} WHERE company = $1 AND ($2 IS NULL OR username > $2) AND ($3 IS NULL OR status = $3) \
             AND ($4 IS NULL OR EXISTS (SELECT 1 FROM user_roles ur WHERE ur.user_id = users.id \
                  AND ur.role = $4)) ORDER BY username LIMIT $5",
            *USER_SELECT
        );
        let rows = sqlx::query_as::<D, UserRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(&filter.status)
            .bind(&filter.role)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    pub(crate) async fn set_password(
        c: &mut D::Connection,
        company: &str,
        user_id: &str,
        hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE users SET password_hash = $3, password_last_set = $4, password_not_set_reason = NULL, \
             failed_login_count = 0, locked_until_ms = NULL, sessions_valid_after_ms = $5 \
             WHERE company = $1 AND id = $2",
        )
        .bind(company)
        .bind(user_id)
        .bind(hash)
        .bind(at)
        .bind(at.timestamp_millis())
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn reserve_login_attempt(
        c: &mut D::Connection,
        company: &str,
        user_id: &str,
        p: LoginPolicy,
    ) -> Result<Option<i64>, StoreError> {
        // Both assignments read the row as it was; a lock that has run out restarts the count at this
        // attempt. A locked row is not matched, so nothing is counted while the lock holds.
        let count = sqlx::query_scalar::<D, i64>(
            "UPDATE users SET \
             failed_login_count = CASE WHEN locked_until_ms <= $3 THEN 1 ELSE failed_login_count + 1 END, \
             locked_until_ms = CASE \
               WHEN (CASE WHEN locked_until_ms <= $3 THEN 1 ELSE failed_login_count + 1 END) >= $4 THEN $5 \
               ELSE NULL END \
             WHERE company = $1 AND id = $2 AND (locked_until_ms IS NULL OR locked_until_ms <= $3) \
             RETURNING failed_login_count",
        )
        .bind(company)
        .bind(user_id)
        .bind(p.now_ms)
        .bind(p.lock_after)
        .bind(p.lock_until_ms)
        .fetch_optional(&mut *c)
        .await?;
        Ok(count)
    }

    pub(crate) async fn record_login_success(
        c: &mut D::Connection,
        company: &str,
        user_id: &str,
        at: DateTime<Utc>,
        reserved: i64,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE users SET last_login = $3, login_count = login_count + 1, \
             locked_until_ms = CASE WHEN failed_login_count = $4 THEN NULL ELSE locked_until_ms END, \
             failed_login_count = CASE WHEN failed_login_count = $4 THEN 0 ELSE failed_login_count END \
             WHERE company = $1 AND id = $2",
        )
        .bind(company)
        .bind(user_id)
        .bind(at)
        .bind(reserved)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn get_client(
        c: &mut D::Connection,
        company: &str,
        client_id: &str,
    ) -> Result<Option<OAuthClient>, StoreError> {
        let sql = format!(
            "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE company = $1 AND client_id = $2"
        );
        let row = sqlx::query_as::<D, ClientRow>(&sql)
            .bind(company)
            .bind(client_id)
            .fetch_optional(&mut *c)
            .await?;
        Ok(row.map(OAuthClient::from))
    }

    pub(crate) async fn insert_client(
        c: &mut D::Connection,
        o: &OAuthClient,
    ) -> Result<(), StoreError> {
        let sql = format!(
            "INSERT INTO oauth_clients ({CLIENT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
        );
        sqlx::query::<D>(&sql)
            .bind(&o.client_id)
            .bind(&o.company)
            .bind(&o.name)
            .bind(&o.secret_hash)
            .bind(to_json(&o.grant_types))
            .bind(to_json(&o.redirect_uris))
            .bind(to_json(&o.scopes))
            .bind(o.issue_refresh_token)
            .bind(o.access_token_ttl)
            .bind(o.refresh_token_ttl)
            .bind(o.secret_rotated_on)
            .bind(o.admin_access)
            .bind(o.created_on)
            .bind(&o.created_by)
            .bind(o.modified_on)
            .bind(&o.modified_by)
            .bind(o.version)
            .execute(&mut *c)
            .await
            .map_err(|e| StoreError::unique(e, format!("client {}", o.client_id)))?;
        Ok(())
    }

    pub(crate) async fn update_client(
        c: &mut D::Connection,
        o: &OAuthClient,
    ) -> Result<(), StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE oauth_clients SET name = $3, grant_types = $4, redirect_uris = $5, scopes = $6, \
             issue_refresh_token = $7, access_token_ttl = $8, refresh_token_ttl = $9, admin_access = $10, \
             modified_on = $11, modified_by = $12, version = $13 \
             WHERE company = $1 AND client_id = $2 AND version = $14",
        )
        .bind(&o.company)
        .bind(&o.client_id)
        .bind(&o.name)
        .bind(to_json(&o.grant_types))
        .bind(to_json(&o.redirect_uris))
        .bind(to_json(&o.scopes))
        .bind(o.issue_refresh_token)
        .bind(o.access_token_ttl)
        .bind(o.refresh_token_ttl)
        .bind(o.admin_access)
        .bind(o.modified_on)
        .bind(&o.modified_by)
        .bind(o.version)
        .bind(o.version - 1)
        .execute(&mut *c)
        .await?;
        stale_unless_one(D::rows_affected(&done))
    }

    pub(crate) async fn set_client_secret(
        c: &mut D::Connection,
        company: &str,
        client_id: &str,
        secret_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE oauth_clients SET secret_hash = $3, secret_rotated_on = $4, modified_on = $4, \
             version = version + 1 WHERE company = $1 AND client_id = $2",
        )
        .bind(company)
        .bind(client_id)
        .bind(secret_hash)
        .bind(at)
        .execute(&mut *c)
        .await?;
        if D::rows_affected(&done) == 1 {
            Ok(())
        } else {
            Err(StoreError::NotFound(format!("client {client_id}")))
        }
    }

    pub(crate) async fn set_client_secret_if_version(
        c: &mut D::Connection,
        company: &str,
        client_id: &str,
        version: i64,
        secret_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE oauth_clients SET secret_hash = $4, secret_rotated_on = $5, modified_on = $5, \
             version = version + 1 WHERE company = $1 AND client_id = $2 AND version = $3",
        )
        .bind(company)
        .bind(client_id)
        .bind(version)
        .bind(secret_hash)
        .bind(at)
        .execute(&mut *c)
        .await?;
        stale_unless_one(D::rows_affected(&done))
    }

    pub(crate) async fn delete_client_if_version(
        c: &mut D::Connection,
        company: &str,
        client_id: &str,
        version: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "DELETE FROM oauth_clients WHERE company = $1 AND client_id = $2 AND version = $3",
        )
        .bind(company)
        .bind(client_id)
        .bind(version)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) == 1)
    }

    pub(crate) async fn list_clients(
        c: &mut D::Connection,
        company: &str,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<OAuthClient>, StoreError> {
        let sql = format!(
            "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE company = $1 \
             AND ($2 IS NULL OR client_id > $2) ORDER BY client_id LIMIT $3"
        );
        let rows = sqlx::query_as::<D, ClientRow>(&sql)
            .bind(company)
            .bind(after)
            .bind(limit)
            .fetch_all(&mut *c)
            .await?;
        Ok(rows.into_iter().map(OAuthClient::from).collect())
    }
}
