//! Rows as both databases return them, and their conversion to the model. Lists are stored as JSON text
//! (grant types, redirect URIs, scopes, permissions), a user's roles come joined in one string.

use chrono::{DateTime, Utc};

use crate::model::*;

fn json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("directory values serialize")
}

/// Separates the role names of a user in the joined column; role names never contain it.
pub(super) const ROLE_SEPARATOR: char = ',';

#[derive(sqlx::FromRow)]
pub(super) struct CompanyRow {
    id: String,
    name: String,
    created_on: DateTime<Utc>,
}

impl From<CompanyRow> for Company {
    fn from(r: CompanyRow) -> Self {
        Company {
            id: r.id,
            name: r.name,
            created_on: r.created_on,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct RoleRow {
    company: String,
    name: String,
    description: String,
    permissions: String,
    created_on: DateTime<Utc>,
    created_by: Option<String>,
    modified_on: DateTime<Utc>,
    modified_by: String,
    version: i64,
}

impl From<RoleRow> for Role {
    fn from(r: RoleRow) -> Self {
        Role {
            company: r.company,
            name: r.name,
            description: r.description,
            permissions: json_list(&r.permissions),
            created_on: r.created_on,
            created_by: r.created_by,
            modified_on: r.modified_on,
            modified_by: r.modified_by,
            version: r.version,
        }
    }
}

/// The permissions column of one role.
pub(super) fn permissions(text: &str) -> Vec<String> {
    json_list(text)
}

/// A user row joined with one of its roles (its name in `user.roles`, its place, its permissions column,
/// a JSON array; all NULL for a user without roles), and the value of a probe of another owner's table.
#[derive(sqlx::FromRow)]
pub(super) struct UserPermissionsRow {
    #[sqlx(flatten)]
    user: UserRow,
    position: Option<i32>,
    permissions: Option<String>,
    probe: bool,
}

impl UserPermissionsRow {
    /// The same row read by a direct SQLite connection (`common::db::SqliteReaders`).
    pub(super) fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<UserPermissionsRow> {
        Ok(UserPermissionsRow {
            user: UserRow::from_sqlite(row)?,
            position: row.get(USER_COLUMN_COUNT + 1)?,
            permissions: row.get(USER_COLUMN_COUNT + 2)?,
            probe: row.get(USER_COLUMN_COUNT + 3)?,
        })
    }

    /// The rows of one user folded into the user with its roles in order, its permissions (each once, in
    /// the order of its roles) and the probe's value; `None` without rows (no such user).
    pub(super) fn fold(mut rows: Vec<UserPermissionsRow>) -> Option<UserAccess> {
        rows.sort_by_key(|r| r.position);
        let mut names: Vec<String> = Vec::with_capacity(rows.len());
        let mut granted: Vec<String> = Vec::new();
        for row in &mut rows {
            names.extend(row.user.roles.take());
            for p in row
                .permissions
                .as_deref()
                .map(permissions)
                .unwrap_or_default()
            {
                if !granted.contains(&p) {
                    granted.push(p);
                }
            }
        }
        let first = rows.into_iter().next()?;
        let mut user = first.user;
        user.roles = Some(names.join(&ROLE_SEPARATOR.to_string()));
        Some(UserAccess {
            user: User::from(user),
            permissions: granted,
            probe: first.probe,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct UserRow {
    id: String,
    company: String,
    username: String,
    first_name: String,
    last_name: String,
    salutation: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    automatic_update: bool,
    excluded_from_user_activity: bool,
    company_account_id: Option<String>,
    login_blocked: bool,
    login_blocked_reason: Option<String>,
    api_access: bool,
    status: String,
    data_access: String,
    links: Option<String>,
    password_hash: Option<String>,
    password_last_set: Option<DateTime<Utc>>,
    password_last_emailed: Option<DateTime<Utc>>,
    password_not_set_reason: Option<String>,
    created_on: DateTime<Utc>,
    created_by: Option<String>,
    modified_on: DateTime<Utc>,
    modified_by: String,
    last_login: Option<DateTime<Utc>>,
    login_count: i64,
    failed_login_count: i64,
    locked_until_ms: Option<i64>,
    sessions_valid_after_ms: Option<i64>,
    version: i64,
    /// The role names, primary first, joined by `ROLE_SEPARATOR`.
    roles: Option<String>,
}

impl UserRow {
    /// The same row read by a direct SQLite connection (`common::db::SqliteReaders`): the columns by their
    /// place in `USER_COLUMNS` (the contract suite checks the result against the pool's), decoded as sqlx
    /// stores them (integers for booleans, RFC 3339 text for instants).
    pub(super) fn from_sqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<UserRow> {
        Ok(UserRow {
            id: row.get(0)?,
            company: row.get(1)?,
            username: row.get(2)?,
            first_name: row.get(3)?,
            last_name: row.get(4)?,
            salutation: row.get(5)?,
            email: row.get(6)?,
            phone: row.get(7)?,
            automatic_update: row.get(8)?,
            excluded_from_user_activity: row.get(9)?,
            company_account_id: row.get(10)?,
            login_blocked: row.get(11)?,
            login_blocked_reason: row.get(12)?,
            api_access: row.get(13)?,
            status: row.get(14)?,
            data_access: row.get(15)?,
            links: row.get(16)?,
            password_hash: row.get(17)?,
            password_last_set: optional_instant(row, 18)?,
            password_last_emailed: optional_instant(row, 19)?,
            password_not_set_reason: row.get(20)?,
            created_on: instant(row, 21)?,
            created_by: row.get(22)?,
            modified_on: instant(row, 23)?,
            modified_by: row.get(24)?,
            last_login: optional_instant(row, 25)?,
            login_count: row.get(26)?,
            failed_login_count: row.get(27)?,
            locked_until_ms: row.get(28)?,
            sessions_valid_after_ms: row.get(29)?,
            version: row.get(30)?,
            roles: row.get(31)?,
        })
    }
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> Self {
        let mut roles = r
            .roles
            .as_deref()
            .unwrap_or_default()
            .split(ROLE_SEPARATOR)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let primary_role = roles.next().unwrap_or_default();
        User {
            id: r.id,
            company: r.company,
            username: r.username,
            first_name: r.first_name,
            last_name: r.last_name,
            salutation: r.salutation,
            email: r.email,
            phone: r.phone,
            automatic_update: r.automatic_update,
            excluded_from_user_activity: r.excluded_from_user_activity,
            company_account_id: r.company_account_id,
            login_blocked: r.login_blocked,
            login_blocked_reason: r.login_blocked_reason,
            api_access: r.api_access,
            status: r.status,
            primary_role,
            extra_roles: roles.collect(),
            data_access: serde_json::from_str(&r.data_access).unwrap_or_default(),
            links: r.links.and_then(|l| serde_json::from_str(&l).ok()),
            password_hash: r.password_hash,
            password_last_set: r.password_last_set,
            password_last_emailed: r.password_last_emailed,
            password_not_set_reason: r.password_not_set_reason,
            created_on: r.created_on,
            created_by: r.created_by,
            modified_on: r.modified_on,
            modified_by: r.modified_by,
            last_login: r.last_login,
            login_count: r.login_count,
            failed_login_count: r.failed_login_count,
            locked_until_ms: r.locked_until_ms,
            sessions_valid_after_ms: r.sessions_valid_after_ms,
            version: r.version,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(super) struct ClientRow {
    client_id: String,
    company: String,
    name: String,
    secret_hash: Option<String>,
    grant_types: String,
    redirect_uris: String,
    scopes: String,
    issue_refresh_token: bool,
    access_token_ttl: i64,
    refresh_token_ttl: Option<i64>,
    secret_rotated_on: Option<DateTime<Utc>>,
    admin_access: bool,
    created_on: DateTime<Utc>,
    created_by: Option<String>,
    modified_on: DateTime<Utc>,
    modified_by: String,
    version: i64,
}

impl From<ClientRow> for OAuthClient {
    fn from(r: ClientRow) -> Self {
        OAuthClient {
            client_id: r.client_id,
            company: r.company,
            name: r.name,
            secret_hash: r.secret_hash,
            grant_types: json_list(&r.grant_types),
            redirect_uris: json_list(&r.redirect_uris),
            scopes: json_list(&r.scopes),
            issue_refresh_token: r.issue_refresh_token,
            access_token_ttl: r.access_token_ttl,
            refresh_token_ttl: r.refresh_token_ttl,
            secret_rotated_on: r.secret_rotated_on,
            admin_access: r.admin_access,
            created_on: r.created_on,
            created_by: r.created_by,
            modified_on: r.modified_on,
            modified_by: r.modified_by,
            version: r.version,
        }
    }
}

/// The columns of `USER_COLUMNS`, before the joined `roles`.
const USER_COLUMN_COUNT: usize = 31;

/// An instant as sqlx stores it in SQLite (RFC 3339 text), parsed without a format string.
fn instant(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<DateTime<Utc>> {
    let text = row.get_ref(idx)?.as_str()?;
    match DateTime::parse_from_rfc3339(text) {
        Ok(at) => Ok(at.with_timezone(&Utc)),
        Err(_) => row.get(idx),
    }
}

fn optional_instant(
    row: &rusqlite::Row<'_>,
    idx: usize,
) -> rusqlite::Result<Option<DateTime<Utc>>> {
    match row.get_ref(idx)? {
        rusqlite::types::ValueRef::Null => Ok(None),
        _ => instant(row, idx).map(Some),
    }
}
