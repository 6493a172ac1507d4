//! The OAuth client record as every answer shows it (docs/admin-api.md), and the record with its secret
//! that only the answers creating or rotating a secret carry; their schemas are generated from the same
//! structs.

use directory::OAuthClient;
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::iso;

const ALLOWED: &[&str] = &["GET", "PUT", "DELETE"];

/// An OAuth client of the caller's company (never its secret).
#[derive(Serialize, ToSchema)]
#[schema(as = Client)]
pub struct ClientRecord<'a> {
    client_id: &'a str,
    name: &'a str,
    public: bool,
    #[schema(value_type = Vec<String>)]
    grant_types: &'a [String],
    #[schema(value_type = Vec<String>)]
    redirect_uris: &'a [String],
    #[schema(value_type = Vec<String>)]
    scopes: &'a [String],
    issue_refresh_token: bool,
    /// Seconds.
    access_token_ttl: i64,
    /// Seconds; null: unlimited.
    #[schema(required = true)]
    refresh_token_ttl: Option<i64>,
    admin_access: bool,
    /// When the secret was last rotated (ISO 8601), null if never.
    #[schema(required = true)]
    secret_rotated_on: Option<String>,
    _system_properties: ClientSystemProperties<'a>,
    #[schema(value_type = Vec<String>)]
    _allowed: &'static [&'static str],
}

/// Read-only properties; timestamps are ISO 8601 UTC with milliseconds.
#[derive(Serialize, ToSchema)]
pub struct ClientSystemProperties<'a> {
    created_on: String,
    #[schema(required = true)]
    created_by: &'a Option<String>,
    modified_on: String,
    modified_by: &'a str,
}

impl<'a> ClientRecord<'a> {
    pub fn of(c: &'a OAuthClient) -> ClientRecord<'a> {
        ClientRecord {
            client_id: &c.client_id,
            name: &c.name,
            public: c.is_public(),
            grant_types: &c.grant_types,
            redirect_uris: &c.redirect_uris,
            scopes: &c.scopes,
            issue_refresh_token: c.issue_refresh_token,
            access_token_ttl: c.access_token_ttl,
            refresh_token_ttl: c.refresh_token_ttl,
            admin_access: c.admin_access,
            secret_rotated_on: c.secret_rotated_on.map(iso),
            _system_properties: ClientSystemProperties {
                created_on: iso(c.created_on),
                created_by: &c.created_by,
                modified_on: iso(c.modified_on),
                modified_by: &c.modified_by,
            },
            _allowed: ALLOWED,
        }
    }
}

pub fn client_view(c: &OAuthClient) -> ClientRecord<'_> {
    ClientRecord::of(c)
}

/// The client record with its new secret: shown once, never stored or cached.
#[derive(Serialize, ToSchema)]
pub struct ClientWithSecret<'a> {
    #[serde(flatten)]
    client: ClientRecord<'a>,
    /// The secret, shown in this answer only; null for a public client.
    #[schema(required = true)]
    client_secret: Option<&'a str>,
}

pub fn with_secret<'a>(client: &'a OAuthClient, secret: Option<&'a str>) -> ClientWithSecret<'a> {
    ClientWithSecret {
        client: ClientRecord::of(client),
        client_secret: secret,
    }
}

/// A page of clients, as the listing answers it.
pub type ClientPage<'a> = crate::api::Page<ClientRecord<'a>>;
