//! Creating directory records with their generated secrets, as the admin API and `speechd bootstrap` do.

use super::model::*;
use common::secrets::{generate_client_secret, hash_client_secret, SecretKey};

/// What a new OAuth client is allowed.
#[derive(Debug, Clone)]
pub struct ClientSpec {
    pub name: String,
    pub grant_types: Vec<String>,
    pub redirect_uris: Vec<String>,
    pub scopes: Vec<String>,
    pub issue_refresh_token: bool,
    pub access_token_ttl: i64,
    pub refresh_token_ttl: Option<i64>,
    /// A public client has no secret and must use PKCE.
    pub public: bool,
    /// Whether user tokens of this client may call the administration API.
    pub admin_access: bool,
}

/// A new client record and, for a confidential client, its secret: shown once, stored only as a keyed hash.
pub fn new_client(
    company: &str,
    spec: &ClientSpec,
    key: &SecretKey,
    by: &str,
) -> (OAuthClient, Option<String>) {
    let now = common::db::now();
    let secret = (!spec.public).then(generate_client_secret);
    let client = OAuthClient {
        client_id: uuid::Uuid::new_v4().simple().to_string(),
        company: company.to_string(),
        name: spec.name.clone(),
        secret_hash: secret.as_ref().map(|s| hash_client_secret(key, s)),
        grant_types: spec.grant_types.clone(),
        redirect_uris: spec.redirect_uris.clone(),
        scopes: spec.scopes.clone(),
        issue_refresh_token: spec.issue_refresh_token,
        access_token_ttl: spec.access_token_ttl,
        refresh_token_ttl: spec.refresh_token_ttl,
        secret_rotated_on: secret.as_ref().map(|_| now),
        admin_access: spec.admin_access,
        created_on: now,
        created_by: Some(by.to_string()),
        modified_on: now,
        modified_by: by.to_string(),
        version: 1,
    };
    (client, secret)
}

pub fn new_company(id: &str, name: &str) -> Company {
    Company {
        id: id.to_string(),
        name: name.to_string(),
        created_on: common::db::now(),
    }
}

pub fn new_role(
    company: &str,
    name: &str,
    description: &str,
    permissions: &[&str],
    by: &str,
) -> Role {
    let now = common::db::now();
    Role {
        company: company.to_string(),
        name: name.to_string(),
        description: description.to_string(),
        permissions: permissions.iter().map(|p| p.to_string()).collect(),
        created_on: now,
        created_by: Some(by.to_string()),
        modified_on: now,
        modified_by: by.to_string(),
        version: 1,
    }
}
