//! The directory's storage port and its two adapters, compiled from `store_sql.rs`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::sync::Arc;

use super::model::*;
use crate::db::{Database, StoreError};

/// Filters of a user listing.
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    pub status: Option<String>,
    /// Matches the primary role or any extra role.
    pub role: Option<String>,
}

/// Filters of a role listing.
#[derive(Debug, Clone, Default)]
pub struct RoleFilter {
    /// Only the role with this name.
    pub name: Option<String>,
    /// Only roles held (as primary or extra role) by at least one user with this status.
    pub held_by_status: Option<String>,
}

#[async_trait]
pub trait DirectoryStore: Send + Sync + 'static {
    async fn get_company(&self, id: &str) -> Result<Option<Company>, StoreError>;
    /// Inserts the company unless it exists; returns whether it was created.
    async fn ensure_company(&self, company: &Company) -> Result<bool, StoreError>;

    async fn get_role(&self, company: &str, name: &str) -> Result<Option<Role>, StoreError>;
    async fn insert_role(&self, role: &Role) -> Result<(), StoreError>;
    /// Replaces the role if its stored version is `role.version - 1`; otherwise `Stale`.
    async fn update_role(&self, role: &Role) -> Result<(), StoreError>;
    async fn delete_role(&self, company: &str, name: &str) -> Result<bool, StoreError>;
    /// Roles ordered by name, strictly after `after`.
    async fn list_roles(
        &self,
        company: &str,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Role>, StoreError>;

    /// Roles ordered by name, strictly after `after`, that pass `filter`. Role names never contain `"`,
    /// `\` or `%` (the admin API refuses them), so the JSON array of extra roles can be matched by pattern.
    async fn list_roles_filtered(
        &self,
        company: &str,
        filter: &RoleFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Role>, StoreError>;
    /// Deletes the role if its stored version is `version`; false when it is missing or changed.
    async fn delete_role_if_version(
        &self,
        company: &str,
        name: &str,
        version: i64,
    ) -> Result<bool, StoreError>;

    async fn get_user(&self, company: &str, username: &str) -> Result<Option<User>, StoreError>;
    async fn get_user_by_id(&self, company: &str, id: &str) -> Result<Option<User>, StoreError>;
    async fn insert_user(&self, user: &User) -> Result<(), StoreError>;
    /// Replaces the profile (everything but login facts) if the stored version is `user.version - 1`.
    async fn update_user(&self, user: &User) -> Result<(), StoreError>;
    async fn delete_user(&self, company: &str, username: &str) -> Result<bool, StoreError>;
    /// Deletes the user if its stored version is `version`; false when it is missing or changed.
    async fn delete_user_if_version(
        &self,
        company: &str,
        username: &str,
        version: i64,
    ) -> Result<bool, StoreError>;
    /// Users ordered by username, strictly after `after`.
    async fn list_users(
        &self,
        company: &str,
        filter: &UserFilter,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<User>, StoreError>;
    async fn set_password(
        &self,
        company: &str,
        user_id: &str,
        hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Records a successful login: last_login, login_count + 1, failures reset.
    async fn record_login_success(
        &self,
        company: &str,
        user_id: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Records a failed login at `now_ms`; when the count reaches `lock_after`, locks the account until
    /// `lock_until_ms`. A lock that has run out starts the count afresh.
    async fn record_login_failure(
        &self,
        company: &str,
        user_id: &str,
        now_ms: i64,
        lock_after: i64,
        lock_until_ms: i64,
    ) -> Result<(), StoreError>;

    async fn get_client(
        &self,
        company: &str,
        client_id: &str,
    ) -> Result<Option<OAuthClient>, StoreError>;
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), StoreError>;
    /// Replaces the client settings (not the secret) if the stored version is `client.version - 1`.
    async fn update_client(&self, client: &OAuthClient) -> Result<(), StoreError>;
    async fn set_client_secret(
        &self,
        company: &str,
        client_id: &str,
        secret_hash: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    async fn delete_client(&self, company: &str, client_id: &str) -> Result<bool, StoreError>;
    /// Deletes the client if its stored version is `version`; false when it is missing or changed.
    async fn delete_client_if_version(
        &self,
        company: &str,
        client_id: &str,
        version: i64,
    ) -> Result<bool, StoreError>;
    async fn list_clients(
        &self,
        company: &str,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<OAuthClient>, StoreError>;
}

/// The directory store on the given database.
pub fn open_directory(db: &Database) -> Arc<dyn DirectoryStore> {
    match db {
        Database::Postgres(pool) => Arc::new(adapters::postgres::SqlDirectory(pool.clone())),
        Database::Sqlite(pool) => Arc::new(adapters::sqlite::SqlDirectory(pool.clone())),
    }
}

fn json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("directory values serialize")
}

#[derive(sqlx::FromRow)]
struct CompanyRow {
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
struct RoleRow {
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

#[derive(sqlx::FromRow)]
struct UserRow {
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
    primary_role: String,
    extra_roles: String,
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
    version: i64,
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> Self {
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
            primary_role: r.primary_role,
            extra_roles: json_list(&r.extra_roles),
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
            version: r.version,
        }
    }
}

#[derive(sqlx::FromRow)]
struct ClientRow {
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
            created_on: r.created_on,
            created_by: r.created_by,
            modified_on: r.modified_on,
            modified_by: r.modified_by,
            version: r.version,
        }
    }
}

mod adapters {
    use super::*;
    crate::sql_adapters!("store_sql.rs");
}
