use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A tenant. `id` is the company short name used in every path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Company {
    pub id: String,
    pub name: String,
    pub created_on: DateTime<Utc>,
}

/// Permissions a role can grant. Stored by their names.
pub mod permissions {
    pub const MANAGE_USERS: &str = "Manage Users";
    pub const MANAGE_ROLES: &str = "Manage Roles";
    pub const MANAGE_CLIENTS: &str = "Manage Clients";
    pub const VIEW_AUDIT_LOG: &str = "View Audit Log";
    /// Setting the password of another user (with Manage Users). A caller may always set its own.
    pub const SET_PASSWORDS: &str = "Set Passwords";
    pub const ALL: &[&str] = &[
        MANAGE_USERS,
        MANAGE_ROLES,
        MANAGE_CLIENTS,
        VIEW_AUDIT_LOG,
        SET_PASSWORDS,
    ];
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Role {
    pub company: String,
    pub name: String,
    pub description: String,
    pub permissions: Vec<String>,
    pub created_on: DateTime<Utc>,
    pub created_by: Option<String>,
    pub modified_on: DateTime<Utc>,
    pub modified_by: String,
    pub version: i64,
}

/// One entry of `data-access.organization` in the user record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct OrganizationAccess {
    pub role: String,
    pub data_view: String,
    pub unit_group: String,
    pub unit_group_display_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DataAccess {
    #[serde(default)]
    pub organization: Vec<OrganizationAccess>,
    #[serde(default)]
    pub segments: Vec<serde_json::Value>,
}

pub const STATUS_ACTIVE: &str = "ACTIVE";
pub const STATUS_INACTIVE: &str = "INACTIVE";

/// A user with what its roles grant, read together (`get_user_with_permissions`).
#[derive(Debug, Clone, PartialEq)]
pub struct UserAccess {
    pub user: User,
    /// Each permission once, in the order of the user's roles.
    pub permissions: Vec<String>,
    /// The value of the probe read in the same statement (false without one).
    pub probe: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub id: String,
    pub company: String,
    pub username: String,
    pub first_name: String,
    pub last_name: String,
    pub salutation: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub automatic_update: bool,
    pub excluded_from_user_activity: bool,
    pub company_account_id: Option<String>,
    pub login_blocked: bool,
    pub login_blocked_reason: Option<String>,
    /// Whether the account may call the administration API.
    pub api_access: bool,
    pub status: String,
    pub primary_role: String,
    pub extra_roles: Vec<String>,
    pub data_access: DataAccess,
    pub links: Option<serde_json::Value>,
    #[serde(skip_serializing)]
    pub password_hash: Option<String>,
    pub password_last_set: Option<DateTime<Utc>>,
    pub password_last_emailed: Option<DateTime<Utc>>,
    pub password_not_set_reason: Option<String>,
    pub created_on: DateTime<Utc>,
    pub created_by: Option<String>,
    pub modified_on: DateTime<Utc>,
    pub modified_by: String,
    pub last_login: Option<DateTime<Utc>>,
    pub login_count: i64,
    pub failed_login_count: i64,
    /// Until when repeated failed logins lock the account (milliseconds since the epoch).
    pub locked_until_ms: Option<i64>,
    /// Codes, refresh tokens and login sessions of this user authenticated before this instant
    /// (milliseconds since the epoch) are void: set when the password changes and when the account is
    /// blocked, deactivated or re-activated.
    pub sessions_valid_after_ms: Option<i64>,
    pub version: i64,
}

impl User {
    /// A new active user with empty profile fields, as bootstrap and tests create them.
    pub fn new(company: &str, username: &str, primary_role: &str, by: &str) -> User {
        let now = common::db::now();
        User {
            id: uuid::Uuid::new_v4().to_string(),
            company: company.to_string(),
            username: username.to_string(),
            first_name: String::new(),
            last_name: String::new(),
            salutation: None,
            email: None,
            phone: None,
            automatic_update: false,
            excluded_from_user_activity: false,
            company_account_id: None,
            login_blocked: false,
            login_blocked_reason: None,
            api_access: false,
            status: STATUS_ACTIVE.to_string(),
            primary_role: primary_role.to_string(),
            extra_roles: Vec::new(),
            data_access: DataAccess::default(),
            links: None,
            password_hash: None,
            password_last_set: None,
            password_last_emailed: None,
            password_not_set_reason: None,
            created_on: now,
            created_by: Some(by.to_string()),
            modified_on: now,
            modified_by: by.to_string(),
            last_login: None,
            login_count: 0,
            failed_login_count: 0,
            locked_until_ms: None,
            sessions_valid_after_ms: None,
            version: 1,
        }
    }

    /// Whether the user may log in at all (before checking the password).
    pub fn can_log_in(&self) -> bool {
        !self.login_blocked && self.status == STATUS_ACTIVE
    }

    /// Whether something the user authenticated at `auth_time_ms` (a login session, a code, a refresh
    /// token family) is still good: the account may log in and nothing voided its sessions since.
    pub fn session_valid(&self, auth_time_ms: i64) -> bool {
        self.can_log_in()
            && self
                .sessions_valid_after_ms
                .is_none_or(|after| auth_time_ms >= after)
    }

    /// Every role the user holds, the primary role first.
    pub fn roles(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.primary_role.as_str())
            .chain(self.extra_roles.iter().map(String::as_str))
    }
}

/// The grant types a client may be allowed.
pub mod grants {
    pub const CLIENT_CREDENTIALS: &str = "client_credentials";
    pub const AUTHORIZATION_CODE: &str = "authorization_code";
    pub const REFRESH_TOKEN: &str = "refresh_token";
    pub const ALL: &[&str] = &[CLIENT_CREDENTIALS, AUTHORIZATION_CODE, REFRESH_TOKEN];
}

/// API scopes a client-credentials token may carry.
pub mod scopes {
    pub const ANALYTICS_READ: &str = "analytics:read";
    pub const ANALYTICS_WRITE: &str = "analytics:write";
    pub const EVENTS_READ: &str = "events:read";
    /// Creating, changing and deleting ingestion projects (app keys).
    pub const EVENTS_MANAGE: &str = "events:manage";
    pub const ALL: &[&str] = &[ANALYTICS_READ, ANALYTICS_WRITE, EVENTS_READ, EVENTS_MANAGE];
}

pub const DEFAULT_ACCESS_TOKEN_TTL: i64 = 3600;
/// The longest access-token lifetime a client may have, in seconds: how long a revocation of tokens by
/// issue time must be kept.
pub const MAX_ACCESS_TOKEN_TTL: i64 = 86_400;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClient {
    pub client_id: String,
    pub company: String,
    pub name: String,
    /// Keyed hash of the secret; `None` for a public client, which must use PKCE.
    #[serde(skip_serializing)]
    pub secret_hash: Option<String>,
    pub grant_types: Vec<String>,
    pub redirect_uris: Vec<String>,
    pub scopes: Vec<String>,
    pub issue_refresh_token: bool,
    /// Access-token lifetime in seconds.
    pub access_token_ttl: i64,
    /// Refresh-token lifetime in seconds; `None` is unlimited.
    pub refresh_token_ttl: Option<i64>,
    pub secret_rotated_on: Option<DateTime<Utc>>,
    /// Whether user tokens issued to this client may call the administration API: they then carry the
    /// scope `admin`. Off for new clients.
    pub admin_access: bool,
    pub created_on: DateTime<Utc>,
    pub created_by: Option<String>,
    pub modified_on: DateTime<Utc>,
    pub modified_by: String,
    pub version: i64,
}

impl OAuthClient {
    pub fn is_public(&self) -> bool {
        self.secret_hash.is_none()
    }

    pub fn allows_grant(&self, grant: &str) -> bool {
        self.grant_types.iter().any(|g| g == grant)
    }

    /// Exact, character-for-character match against a registered redirect URI.
    pub fn has_redirect_uri(&self, uri: &str) -> bool {
        self.redirect_uris.iter().any(|r| r == uri)
    }
}
