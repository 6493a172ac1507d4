//! `speechd bootstrap`: a company with everything needed to try the platform, created idempotently.
//! The credentials are kept in `<data>/bootstrap/<company>.json` (mode 0600); a second run prints the
//! same credentials while they still work, and repairs (re-issues) whatever no longer does.

use anyhow::Context;
use chrono::Utc;
use common::directory::{
    grants, new_client, new_company, new_role, permissions, scopes, ClientSpec, DirectoryStore,
    User, DEFAULT_ACCESS_TOKEN_TTL,
};
use common::secrets::{
    generate_password, hash_password, verify_client_secret, verify_password, SecretKey,
};
use serde_json::{json, Value};

use crate::platform::{write_private, Platform};

const ADMIN_ROLE: &str = "Administrator";
const ADMIN_USERNAME: &str = "admin";
const CLIENT_NAME: &str = "bootstrap";
const BY: &str = "bootstrap";

pub async fn run(platform: &Platform, company: &str, redirect_uri: &str) -> anyhow::Result<Value> {
    validate_company(company)?;
    url::Url::parse(redirect_uri)
        .with_context(|| format!("--redirect-uri {redirect_uri:?} is not an absolute URL"))?;
    let db = platform.database().await?;
    platform.migrate(&db).await?;
    let directory = common::directory::open_directory(&db);
    let secret = platform.auth.common.secret()?;

    directory
        .ensure_company(&new_company(company, company))
        .await?;
    if directory.get_role(company, ADMIN_ROLE).await?.is_none() {
        let role = new_role(
            company,
            ADMIN_ROLE,
            "Full administration of the company",
            permissions::ALL,
            BY,
        );
        directory.insert_role(&role).await?;
    }

    let saved_path = platform
        .data_dir
        .join("bootstrap")
        .join(format!("{company}.json"));
    let saved: Option<Value> = std::fs::read_to_string(&saved_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let saved_str = |key: &str| {
        saved
            .as_ref()
            .and_then(|s| s[key].as_str().map(str::to_string))
    };

    let admin_password =
        ensure_admin(directory.as_ref(), company, saved_str("admin_password")).await?;
    let (client_id, client_secret) = ensure_client(
        directory.as_ref(),
        &secret,
        company,
        redirect_uri,
        saved_str("client_id"),
        saved_str("client_secret"),
    )
    .await?;

    let auth_url = platform.auth_url();
    let output = json!({
        "company": company,
        "auth_url": auth_url,
        "token_url": format!("{auth_url}/oauth/{company}/token"),
        "authorize_url": format!("{auth_url}/oauth/{company}/authorize"),
        "api_url": platform.api_url(),
        "base_url": null,
        "track_url": null,
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
        "admin_username": ADMIN_USERNAME,
        "admin_password": admin_password,
        "organization": null,
        "folder": null,
        "app_key": null,
    });
    std::fs::create_dir_all(saved_path.parent().expect("has a parent"))?;
    write_private(&saved_path, &serde_json::to_string_pretty(&output)?)?;
    Ok(output)
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

/// The admin user, created or repaired; returns a password that logs in.
async fn ensure_admin(
    directory: &dyn DirectoryStore,
    company: &str,
    saved: Option<String>,
) -> anyhow::Result<String> {
    let existing = directory.get_user(company, ADMIN_USERNAME).await?;
    let user = match existing {
        Some(mut user) => {
            if !user.api_access
                || user.login_blocked
                || user.primary_role != ADMIN_ROLE
                || user.status != "ACTIVE"
            {
                user.api_access = true;
                user.login_blocked = false;
                user.login_blocked_reason = None;
                user.status = "ACTIVE".into();
                user.primary_role = ADMIN_ROLE.into();
                user.modified_on = Utc::now();
                user.modified_by = BY.into();
                user.version += 1;
                directory.update_user(&user).await?;
            }
            user
        }
        None => {
            let mut user = User::new(company, ADMIN_USERNAME, ADMIN_ROLE, BY);
            user.first_name = "Company".into();
            user.last_name = "Administrator".into();
            user.api_access = true;
            directory.insert_user(&user).await?;
            user
        }
    };
    if let Some(password) = saved {
        if verify_password(&password, user.password_hash.as_deref()) {
            return Ok(password);
        }
    }
    let password = generate_password();
    directory
        .set_password(company, &user.id, &hash_password(&password), Utc::now())
        .await?;
    Ok(password)
}

/// The bootstrap OAuth client, created or repaired; returns its id and a secret that authenticates.
async fn ensure_client(
    directory: &dyn DirectoryStore,
    key: &SecretKey,
    company: &str,
    redirect_uri: &str,
    saved_id: Option<String>,
    saved_secret: Option<String>,
) -> anyhow::Result<(String, String)> {
    let existing = match &saved_id {
        Some(id) => directory.get_client(company, id).await?,
        None => find_client_named(directory, company, CLIENT_NAME).await?,
    };
    let Some(mut client) = existing else {
        let spec = ClientSpec {
            name: CLIENT_NAME.into(),
            grant_types: grants::ALL.iter().map(|g| g.to_string()).collect(),
            redirect_uris: vec![redirect_uri.to_string()],
            scopes: scopes::ALL.iter().map(|s| s.to_string()).collect(),
            issue_refresh_token: true,
            access_token_ttl: DEFAULT_ACCESS_TOKEN_TTL,
            refresh_token_ttl: None,
            public: false,
        };
        let (client, secret) = new_client(company, &spec, key, BY);
        directory.insert_client(&client).await?;
        return Ok((
            client.client_id,
            secret.expect("a confidential client has a secret"),
        ));
    };
    if !client.has_redirect_uri(redirect_uri) {
        client.redirect_uris.push(redirect_uri.to_string());
        client.modified_on = Utc::now();
        client.modified_by = BY.into();
        client.version += 1;
        directory.update_client(&client).await?;
    }
    if let (Some(secret), Some(hash)) = (&saved_secret, &client.secret_hash) {
        if verify_client_secret(key, secret, hash) {
            return Ok((client.client_id, secret.clone()));
        }
    }
    let secret = common::secrets::generate_client_secret();
    directory
        .set_client_secret(
            company,
            &client.client_id,
            &common::secrets::hash_client_secret(key, &secret),
            Utc::now(),
        )
        .await?;
    Ok((client.client_id, secret))
}

/// The company's client called `name`, when the saved credentials are gone (a fresh container).
async fn find_client_named(
    directory: &dyn DirectoryStore,
    company: &str,
    name: &str,
) -> anyhow::Result<Option<common::directory::OAuthClient>> {
    let mut after: Option<String> = None;
    loop {
        let page = directory
            .list_clients(company, after.as_deref(), 100)
            .await?;
        if let Some(found) = page.iter().find(|c| c.name == name) {
            return Ok(Some(found.clone()));
        }
        match page.last() {
            Some(last) if page.len() == 100 => after = Some(last.client_id.clone()),
            _ => return Ok(None),
        }
    }
}
