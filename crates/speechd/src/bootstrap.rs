//! `speechd bootstrap`: a company with everything needed to try the platform (its administrator, an OAuth
//! client, an organization with a folder in analytics, and an ingestion project), created idempotently in one transaction. Secrets are kept only as hashes, so each run keeps what exists and prints new credentials:
//! the admin password and the client secret are replaced. The company's callback signing secret is
//! derived from the server key, so it is the same on every run. Nothing secret is written to disk.

use anyhow::Context;
use chrono::Utc;
use common::db::Tx;
use common::secrets::{
    generate_client_secret, generate_password, hash_client_secret, verify_client_secret, SecretKey,
};
use directory::{
    grants, new_client, new_company, new_role, permissions, scopes, ClientSpec, User,
    DEFAULT_ACCESS_TOKEN_TTL, STATUS_ACTIVE,
};
use serde_json::{json, Value};

use crate::platform::Platform;

const ADMIN_ROLE: &str = "Administrator";
const ADMIN_USERNAME: &str = "admin";
const CLIENT_NAME: &str = "bootstrap";
const BY: &str = "bootstrap";
/// The ingestion project every bootstrapped company gets.
const DEFAULT_PROJECT: &str = "default";

pub async fn run(platform: &Platform, company: &str, redirect_uri: &str) -> anyhow::Result<Value> {
    validate_company(company)?;
    url::Url::parse(redirect_uri)
        .with_context(|| format!("--redirect-uri {redirect_uri:?} is not an absolute URL"))?;
    let db = platform.database().await?;
    platform.migrate(&db).await?;
    let secret = platform.auth.common.secret()?;
    // Hashing is slow: done before the transaction, which holds the database's write lock.
    let admin_password = generate_password();
    let password_hash = {
        let password = admin_password.clone();
        tokio::task::spawn_blocking(move || common::secrets::hash_password(&password)).await?
    };
    let client_secret = generate_client_secret();
    let secret_hash = hash_client_secret(&secret, &client_secret);

    let mut tx = db.begin().await?;
    directory::ensure_company(&mut tx, &new_company(company, company)).await?;
    ensure_admin_role(&mut tx, company).await?;
    ensure_admin(&mut tx, company, &password_hash).await?;
    let client_id = ensure_client(&mut tx, &secret, company, redirect_uri, &secret_hash).await?;
    // Where browsers reach the console (`SPEECH_ANALYTICS_CONSOLE_URL`, else the analytics address): its
    // client's sign-in callback is registered there, and the service checks it against the same setting.
    let console_url = platform.analytics.console().public_url;
    ensure_console_client(&mut tx, &secret, company, &console_url).await?;
    let (organization, folder) =
        analytics_core::provision::ensure_defaults(&mut tx, company).await?;
    let project = ingest::store::ensure_project(&mut tx, company, DEFAULT_PROJECT).await?;
    // The company's current callback secret, rotated or not (the overlap plays no part in it).
    let signing =
        callbacks::secrets::signing(&mut tx, &secret, company, std::time::Duration::ZERO).await?;
    tx.commit().await?;
    // Earlier versions kept the credentials in this file, in plain text.
    let _ = std::fs::remove_file(
        platform
            .data_dir
            .join("bootstrap")
            .join(format!("{company}.json")),
    );

    let auth_url = platform.auth_url();
    Ok(json!({
        "company": company,
        "auth_url": auth_url,
        "token_url": format!("{auth_url}/oauth/{company}/token"),
        "authorize_url": format!("{auth_url}/oauth/{company}/authorize"),
        "api_url": platform.api_url(),
        "base_url": platform.base_url(),
        "console_url": format!("{console_url}/console/{company}/"),
        "track_url": platform.track_url(),
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
        "admin_username": ADMIN_USERNAME,
        "admin_password": admin_password,
        "organization": organization,
        "folder": folder,
        "app_key": project.app_key,
        // Derived from the server key, the company and its rotations: the same on every run until the
        // company rotates it (POST /callbacks/<company>/secret).
        "callback_secret": signing.current.to_text(),
    }))
}

/// The shared rule, so that bootstrap never creates a company whose tokens the verifiers would refuse.
fn validate_company(company: &str) -> anyhow::Result<()> {
    anyhow::ensure!(
        common::jwt::valid_company(company),
        "--company must be 1 to {} characters of a-z, 0-9, '-' and '_'",
        common::jwt::MAX_COMPANY_LEN
    );
    Ok(())
}

/// The Administrator role, holding every permission (also those added since it was created).
async fn ensure_admin_role(tx: &mut Tx, company: &str) -> anyhow::Result<()> {
    match directory::get_role(&mut *tx, company, ADMIN_ROLE).await? {
        None => {
            let role = new_role(
                company,
                ADMIN_ROLE,
                "Full administration of the company",
                permissions::ALL,
                BY,
            );
            directory::insert_role(&mut *tx, &role).await?;
        }
        Some(mut role) => {
            let missing: Vec<String> = permissions::ALL
                .iter()
                .filter(|p| !role.permissions.iter().any(|h| h == *p))
                .map(|p| p.to_string())
                .collect();
            if !missing.is_empty() {
                role.permissions.extend(missing);
                role.modified_on = Utc::now();
                role.modified_by = BY.into();
                role.version += 1;
                directory::update_role(&mut *tx, &role).await?;
            }
        }
    }
    Ok(())
}

/// The admin user, created or repaired (active, unblocked, API access, Administrator), with a new
/// password.
async fn ensure_admin(tx: &mut Tx, company: &str, password_hash: &str) -> anyhow::Result<()> {
    let user = match directory::get_user(&mut *tx, company, ADMIN_USERNAME).await? {
        Some(mut user) => {
            if !user.api_access
                || user.login_blocked
                || user.primary_role != ADMIN_ROLE
                || user.status != STATUS_ACTIVE
            {
                user.api_access = true;
                user.login_blocked = false;
                user.login_blocked_reason = None;
                user.status = STATUS_ACTIVE.into();
                user.primary_role = ADMIN_ROLE.into();
                user.extra_roles.retain(|r| r != ADMIN_ROLE);
                user.modified_on = Utc::now();
                user.modified_by = BY.into();
                user.version += 1;
                directory::update_user(&mut *tx, &user).await?;
            }
            user
        }
        None => {
            let mut user = User::new(company, ADMIN_USERNAME, ADMIN_ROLE, BY);
            user.first_name = "Company".into();
            user.last_name = "Administrator".into();
            user.api_access = true;
            directory::insert_user(&mut *tx, &user).await?;
            user
        }
    };
    directory::set_password(&mut *tx, company, &user.id, password_hash, Utc::now()).await?;
    Ok(())
}

/// The bootstrap client's id in `company`: derived from the server key, so each run finds the client it
/// made (never one a user named `bootstrap` through the administration API, whose ids are random), and
/// an id no one can choose for a client of their own.
fn bootstrap_client_id(key: &SecretKey, company: &str) -> String {
    let derived = key.derive(&format!("speechd bootstrap client of {company}"));
    derived[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The bootstrap OAuth client (found by its derived id), created or repaired: every grant and scope,
/// refresh tokens, administration access, the redirect URI registered, and a new secret. Returns its id.
async fn ensure_client(
    tx: &mut Tx,
    key: &SecretKey,
    company: &str,
    redirect_uri: &str,
    secret_hash: &str,
) -> anyhow::Result<String> {
    let id = bootstrap_client_id(key, company);
    let Some(mut client) = directory::get_client(&mut *tx, company, &id).await? else {
        let spec = ClientSpec {
            name: CLIENT_NAME.into(),
            grant_types: grants::ALL.iter().map(|g| g.to_string()).collect(),
            redirect_uris: vec![redirect_uri.to_string()],
            scopes: scopes::ALL.iter().map(|s| s.to_string()).collect(),
            issue_refresh_token: true,
            access_token_ttl: DEFAULT_ACCESS_TOKEN_TTL,
            refresh_token_ttl: None,
            public: false,
            admin_access: true,
        };
        let (mut client, _) = new_client(company, &spec, key, BY);
        client.client_id = id;
        client.secret_hash = Some(secret_hash.to_string());
        directory::insert_client(&mut *tx, &client).await?;
        return Ok(client.client_id);
    };
    if repair(&mut client, redirect_uri) {
        client.modified_on = Utc::now();
        client.modified_by = BY.into();
        client.version += 1;
        directory::update_client(&mut *tx, &client).await?;
    }
    directory::set_client_secret(
        &mut *tx,
        company,
        &client.client_id,
        secret_hash,
        Utc::now(),
    )
    .await?;
    Ok(client.client_id)
}

/// The console's client (`console::client`): its id and secret derived from the server key, the code
/// grant with the analytics scopes, the console's sign-in callback and sign-out return registered.
async fn ensure_console_client(
    tx: &mut Tx,
    key: &SecretKey,
    company: &str,
    console_url: &str,
) -> anyhow::Result<()> {
    let id = console::client::client_id(key, company);
    let redirect_uris = vec![
        console::client::redirect_uri(console_url, company),
        console::client::signed_out_uri(console_url, company),
    ];
    let secret = console::client::client_secret(key, company);
    let secret_hash = hash_client_secret(key, &secret);
    match directory::get_client(&mut *tx, company, &id).await? {
        None => {
            let spec = ClientSpec {
                name: console::client::CLIENT_NAME.into(),
                grant_types: vec![grants::AUTHORIZATION_CODE.into()],
                redirect_uris,
                scopes: vec![
                    scopes::ANALYTICS_READ.into(),
                    scopes::ANALYTICS_WRITE.into(),
                ],
                issue_refresh_token: false,
                access_token_ttl: DEFAULT_ACCESS_TOKEN_TTL,
                refresh_token_ttl: None,
                public: false,
                admin_access: false,
            };
            let (mut client, _) = new_client(company, &spec, key, BY);
            client.client_id = id;
            client.secret_hash = Some(secret_hash);
            directory::insert_client(&mut *tx, &client).await?;
        }
        Some(mut client) => {
            let missing: Vec<String> = redirect_uris
                .into_iter()
                .filter(|uri| !client.has_redirect_uri(uri))
                .collect();
            if !missing.is_empty() {
                client.redirect_uris.extend(missing);
                client.modified_on = Utc::now();
                client.modified_by = BY.into();
                client.version += 1;
                directory::update_client(&mut *tx, &client).await?;
            }
            // A new secret would revoke the tokens of the signed-in sessions: only a wrong one is set.
            if !verify_client_secret(
                key,
                &secret,
                client.secret_hash.as_deref().unwrap_or_default(),
            ) {
                directory::set_client_secret(&mut *tx, company, &id, &secret_hash, Utc::now())
                    .await?;
            }
        }
    }
    Ok(())
}

/// Gives `client` everything bootstrap prints it for (every grant and scope, refresh tokens,
/// administration access, `redirect_uri`); whether anything was missing.
fn repair(client: &mut directory::OAuthClient, redirect_uri: &str) -> bool {
    let mut changed = false;
    let mut add = |have: &mut Vec<String>, all: &[&str]| {
        for wanted in all {
            if !have.iter().any(|h| h == wanted) {
                have.push(wanted.to_string());
                changed = true;
            }
        }
    };
    add(&mut client.grant_types, grants::ALL);
    add(&mut client.scopes, scopes::ALL);
    if !client.has_redirect_uri(redirect_uri) {
        client.redirect_uris.push(redirect_uri.to_string());
        changed = true;
    }
    if !client.admin_access || !client.issue_refresh_token {
        client.admin_access = true;
        client.issue_refresh_token = true;
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_id_is_the_company_s_own_and_looks_like_any_other() {
        let key = SecretKey::generate();
        let id = bootstrap_client_id(&key, "acme");
        assert_eq!(
            id,
            bootstrap_client_id(&key, "acme"),
            "the same on every run"
        );
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(id, bootstrap_client_id(&key, "globex"));
        assert_ne!(id, bootstrap_client_id(&SecretKey::generate(), "acme"));
    }
}
