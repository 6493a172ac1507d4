//! `/admin/v1/clients`: the company's OAuth clients (permission Manage Clients): grants, redirect URIs,
//! the Issue Refresh Token setting, token lifetimes and secret rotation. A secret is shown once, in the
//! answer that creates or rotates it; the directory keeps only its keyed hash. `admin_access` (off unless
//! set) decides whether user tokens issued to the client may call this API. A change and its audit entry
//! are one transaction.

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use chrono::Utc;
use common::http::StrictJson;
use common::secrets::{generate_client_secret, hash_client_secret};
use common::{ApiError, ErrorCode};
use directory::{grants, new_client, scopes, ClientSpec, OAuthClient};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::ok_with_etag;
use crate::api::{changes, etag, iso, iso_opt, page, require_if_match, text, texts, Query};
use crate::audit::{self, Change};
use crate::caller::{Caller, ManageClients};
use crate::state::AdminState;

const ALLOWED: &[&str] = &["GET", "PUT", "DELETE"];
pub const MIN_TTL: i64 = 60;
pub const MAX_ACCESS_TTL: i64 = 86_400;

pub fn client_view(c: &OAuthClient) -> Value {
    json!({
        "client_id": c.client_id,
        "name": c.name,
        "public": c.is_public(),
        "grant_types": c.grant_types,
        "redirect_uris": c.redirect_uris,
        "scopes": c.scopes,
        "issue_refresh_token": c.issue_refresh_token,
        "access_token_ttl": c.access_token_ttl,
        "refresh_token_ttl": c.refresh_token_ttl,
        "admin_access": c.admin_access,
        "secret_rotated_on": iso_opt(c.secret_rotated_on),
        "_system_properties": {
            "created_on": iso(c.created_on),
            "created_by": c.created_by,
            "modified_on": iso(c.modified_on),
            "modified_by": c.modified_by,
        },
        "_allowed": ALLOWED,
    })
}

fn audit_view(c: &OAuthClient) -> Map<String, Value> {
    let v = json!({
        "name": c.name,
        "public": c.is_public(),
        "grant_types": c.grant_types,
        "redirect_uris": c.redirect_uris,
        "scopes": c.scopes,
        "issue_refresh_token": c.issue_refresh_token,
        "access_token_ttl": c.access_token_ttl,
        "refresh_token_ttl": c.refresh_token_ttl,
        "admin_access": c.admin_access,
    });
    match v {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A client as POST and PUT take it. The read-only parts of the record are accepted (and ignored), so
/// that a GET result can be sent back as it is; anything else unknown is refused, naming the field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientBody {
    name: Option<String>,
    public: Option<bool>,
    grant_types: Option<Vec<String>>,
    redirect_uris: Option<Vec<String>>,
    scopes: Option<Vec<String>>,
    issue_refresh_token: Option<bool>,
    access_token_ttl: Option<i64>,
    refresh_token_ttl: Option<i64>,
    admin_access: Option<bool>,
    /// Read-only: on PUT it must match the path when given.
    client_id: Option<String>,
    #[serde(rename = "secret_rotated_on")]
    _secret_rotated_on: Option<IgnoredAny>,
    #[serde(rename = "_system_properties")]
    _system_properties: Option<IgnoredAny>,
    #[serde(rename = "_allowed")]
    _allowed: Option<IgnoredAny>,
}

/// At most this many characters in a client's name, each grant or scope, and each redirect URI.
pub const NAME_MAX: usize = 100;
pub const ITEM_MAX: usize = 64;
pub const REDIRECT_URI_MAX: usize = 2000;

/// Checks a client body. `public` is only read on creation (`existing` is `None`).
fn parse_client(body: ClientBody, existing: Option<&OAuthClient>) -> Result<ClientSpec, ApiError> {
    let name = body
        .name
        .ok_or_else(|| ApiError::field("name", "name is required"))?;
    text("name", &name, NAME_MAX)?;
    if name.trim().is_empty() {
        return Err(ApiError::field("name", "name must not be blank"));
    }
    let public = match existing {
        None => body.public.unwrap_or(false),
        Some(c) => {
            if body.public.is_some_and(|p| p != c.is_public()) {
                return Err(ApiError::field(
                    "public",
                    "a client cannot switch between public and confidential; create a new one",
                ));
            }
            c.is_public()
        }
    };
    let grant_types = body.grant_types.ok_or_else(|| {
        ApiError::field(
            "grant_types",
            format!(
                "grant_types is required: a list of {}",
                grants::ALL.join(", ")
            ),
        )
    })?;
    texts("grant_types", &grant_types, ITEM_MAX)?;
    if grant_types.is_empty() {
        return Err(ApiError::field(
            "grant_types",
            "grant_types must name at least one grant",
        ));
    }
    for (i, g) in grant_types.iter().enumerate() {
        if !grants::ALL.contains(&g.as_str()) {
            return Err(ApiError::field(
                format!("grant_types[{i}]"),
                format!(
                    "grant_types[{i}]: unknown grant {g:?}; known are {}",
                    grants::ALL.join(", ")
                ),
            ));
        }
        if grant_types[..i].contains(g) {
            return Err(ApiError::field(
                format!("grant_types[{i}]"),
                format!("grant_types[{i}]: {g} is listed twice"),
            ));
        }
    }
    let has = |g: &str| grant_types.iter().any(|x| x == g);
    if public && has(grants::CLIENT_CREDENTIALS) {
        return Err(ApiError::field(
            "grant_types",
            "a public client has no secret and cannot use client_credentials",
        ));
    }
    let redirect_uris = body.redirect_uris.unwrap_or_default();
    texts("redirect_uris", &redirect_uris, REDIRECT_URI_MAX)?;
    for (i, uri) in redirect_uris.iter().enumerate() {
        let ok = url::Url::parse(uri)
            .map(|u| !u.cannot_be_a_base() && u.fragment().is_none())
            .unwrap_or(false);
        if !ok {
            return Err(ApiError::field(
                format!("redirect_uris[{i}]"),
                format!("redirect_uris[{i}] must be an absolute URL without a fragment"),
            ));
        }
    }
    if has(grants::AUTHORIZATION_CODE) && redirect_uris.is_empty() {
        return Err(ApiError::field(
            "redirect_uris",
            "the authorization_code grant needs at least one redirect URI",
        ));
    }
    let client_scopes = body.scopes.unwrap_or_default();
    texts("scopes", &client_scopes, ITEM_MAX)?;
    for (i, s) in client_scopes.iter().enumerate() {
        if !scopes::ALL.contains(&s.as_str()) {
            return Err(ApiError::field(
                format!("scopes[{i}]"),
                format!(
                    "scopes[{i}]: unknown scope {s:?}; known are {}",
                    scopes::ALL.join(", ")
                ),
            ));
        }
    }
    let issue_refresh_token = body.issue_refresh_token.unwrap_or(false);
    if issue_refresh_token && !has(grants::REFRESH_TOKEN) {
        return Err(ApiError::field(
            "issue_refresh_token",
            "issue_refresh_token needs the refresh_token grant in grant_types",
        ));
    }
    let access_token_ttl = body
        .access_token_ttl
        .unwrap_or(directory::DEFAULT_ACCESS_TOKEN_TTL);
    if !(MIN_TTL..=MAX_ACCESS_TTL).contains(&access_token_ttl) {
        return Err(ApiError::field(
            "access_token_ttl",
            format!("access_token_ttl must be from {MIN_TTL} to {MAX_ACCESS_TTL} seconds"),
        ));
    }
    let refresh_token_ttl = body.refresh_token_ttl;
    if refresh_token_ttl.is_some_and(|t| t < MIN_TTL) {
        return Err(ApiError::field(
            "refresh_token_ttl",
            format!("refresh_token_ttl must be at least {MIN_TTL} seconds, or null for unlimited"),
        ));
    }
    Ok(ClientSpec {
        name,
        grant_types,
        redirect_uris,
        scopes: client_scopes,
        issue_refresh_token,
        access_token_ttl,
        refresh_token_ttl,
        public,
        admin_access: body.admin_access.unwrap_or(false),
    })
}

async fn load(state: &AdminState, company: &str, client_id: &str) -> Result<OAuthClient, ApiError> {
    directory::get_client(&state.db, company, client_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("client {client_id} not found")))
}

/// The client record with its new secret: shown once, never stored or cached.
fn with_secret(client: &OAuthClient, secret: Option<&str>) -> Value {
    let mut view = client_view(client);
    view["client_secret"] = secret.map_or(Value::Null, |s| Value::String(s.to_string()));
    view
}

pub async fn list(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = Query::parse(&req, &["limit", "cursor"])?;
    let limit = q.limit()?;
    let after = q.cursor("clients")?;
    let rows =
        directory::list_clients(&state.db, &caller.company, after.as_deref(), limit + 1).await?;
    Ok(HttpResponse::Ok().json(page(
        "clients",
        rows,
        limit,
        |c| c.client_id.clone(),
        client_view,
    )))
}

pub async fn get(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let client = load(&state, &caller.company, &client_id).await?;
    Ok(ok_with_etag(client.version, client_view(&client)))
}

pub async fn create(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    body: StrictJson<ClientBody>,
) -> Result<HttpResponse, ApiError> {
    let spec = parse_client(body.0, None)?;
    let (client, secret) = new_client(&caller.company, &spec, &state.secret, caller.username());
    let mut fields = audit_view(&client);
    if client.secret_hash.is_some() {
        fields.insert("secret".into(), audit::CHANGED.into());
    }
    let mut tx = state.db.begin().await?;
    directory::insert_client(&mut tx, &client).await?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::CREATE,
            resource_type: audit::CLIENT,
            resource_id: &client.client_id,
            version: Some(client.version),
            changes: changes(None, Some(&fields)),
        },
    )
    .await?;
    Ok(HttpResponse::Created()
        .insert_header((
            "Location",
            format!("/admin/v1/clients/{}", client.client_id),
        ))
        .insert_header(("ETag", etag(client.version)))
        .insert_header(("Cache-Control", "no-store"))
        .json(with_secret(&client, secret.as_deref())))
}

pub async fn replace(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    req: HttpRequest,
    body: StrictJson<ClientBody>,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &client_id).await?;
    require_if_match(&req, "client", current.version)?;
    if body
        .client_id
        .as_deref()
        .is_some_and(|id| id != current.client_id)
    {
        return Err(ApiError::field(
            "client_id",
            "client_id cannot be changed (it must match the path or be left out)",
        ));
    }
    let spec = parse_client(body.0, Some(&current))?;
    let mut client = current.clone();
    client.name = spec.name;
    client.grant_types = spec.grant_types;
    client.redirect_uris = spec.redirect_uris;
    client.scopes = spec.scopes;
    client.issue_refresh_token = spec.issue_refresh_token;
    client.access_token_ttl = spec.access_token_ttl;
    client.refresh_token_ttl = spec.refresh_token_ttl;
    client.admin_access = spec.admin_access;
    client.modified_on = Utc::now();
    client.modified_by = caller.username().to_string();
    client.version = current.version + 1;
    let mut tx = state.db.begin().await?;
    directory::update_client(&mut tx, &client).await?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::REPLACE,
            resource_type: audit::CLIENT,
            resource_id: &client.client_id,
            version: Some(client.version),
            changes: changes(Some(&audit_view(&current)), Some(&audit_view(&client))),
        },
    )
    .await?;
    Ok(ok_with_etag(client.version, client_view(&client)))
}

pub async fn delete(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &client_id).await?;
    require_if_match(&req, "client", current.version)?;
    let mut tx = state.db.begin().await?;
    if !directory::delete_client_if_version(
        &mut tx,
        &caller.company,
        &current.client_id,
        current.version,
    )
    .await?
    {
        return Err(ApiError::new(
            ErrorCode::PreconditionFailed,
            "the client was changed or deleted since you read it; read it again",
        ));
    }
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::DELETE,
            resource_type: audit::CLIENT,
            resource_id: &current.client_id,
            version: None,
            changes: changes(Some(&audit_view(&current)), None),
        },
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /admin/v1/clients/{client_id}/secret`: a new secret replaces the old one at once.
pub async fn rotate_secret(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let current = load(&state, &caller.company, &client_id).await?;
    require_if_match(&req, "client", current.version)?;
    if current.is_public() {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "a public client has no secret to rotate",
        ));
    }
    let secret = generate_client_secret();
    let hash = hash_client_secret(&state.secret, &secret);
    let now = Utc::now();
    let id = &current.client_id;
    let mut tx = state.db.begin().await?;
    directory::set_client_secret(&mut tx, &caller.company, id, &hash, now).await?;
    let client = directory::get_client(&mut tx, &caller.company, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("client {id} not found")))?;
    audit::commit(
        &state,
        tx,
        &caller.company,
        caller.user(),
        Change {
            action: audit::ROTATE_SECRET,
            resource_type: audit::CLIENT,
            resource_id: id,
            version: Some(client.version),
            changes: json!({"secret": {"from": audit::CHANGED, "to": audit::CHANGED}}),
        },
    )
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header(("ETag", etag(client.version)))
        .insert_header(("Cache-Control", "no-store"))
        .json(with_secret(&client, Some(&secret))))
}
