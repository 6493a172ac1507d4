//! `/admin/v1/clients`: the company's OAuth clients (permission Manage Clients): grants, redirect URIs,
//! the Issue Refresh Token setting, token lifetimes and secret rotation. A secret is shown once, in the
//! answer that creates or rotates it; the directory keeps only its keyed hash. `admin_access` (off unless
//! set) decides whether user tokens issued to the client may call this API, so only a caller holding
//! every permission manages a client that has it. A change and its audit entry are one transaction. The
//! body and its checks are in `body`, the record in `record`.

pub(crate) mod body;
mod record;

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use chrono::Utc;
use common::http::StrictJson;
use common::secrets::{generate_client_secret, hash_client_secret};
use common::{ApiError, ErrorCode};
use directory::{new_client, permissions, OAuthClient};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use utoipa::IntoParams;

use super::answer::ok_with_etag;
use super::stored::{self, stored, Stored};
use crate::api::page;
use crate::audit::{self, Change};
use crate::caller::{Caller, ManageClients};
use crate::precondition::{etag, IfMatch};
use crate::query::{encode_cursor, KeyCursor, Limit, Query};
use crate::revoke;
use crate::state::AdminState;

pub use body::ClientBody;
pub use record::{client_view, with_secret, ClientPage, ClientRecord, ClientWithSecret};

/// The fields an audit entry compares.
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

stored!(OAuthClient {
    kind: audit::CLIENT,
    key: client_id,
    audit: audit_view,
    find: directory::get_client,
    insert: directory::insert_client,
    update: directory::update_client,
    delete: directory::delete_client_if_version,
});

/// Refuses (403) a caller that lacks any permission when the client has administration access before or
/// after the change: whoever holds its secret and its redirect addresses gets the tokens of every user
/// who signs in through it, administrators included, so only a caller holding every permission creates,
/// changes, rotates the secret of or deletes one.
fn check_admin_access(caller: &Caller<ManageClients>, admin_access: bool) -> Result<(), ApiError> {
    if admin_access {
        caller.require_all(permissions::ALL, "a client with administration access")?;
    }
    Ok(())
}

/// The query of the client listing.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClientListQuery {
    #[param(inline)]
    limit: Option<Limit>,
    #[param(inline)]
    cursor: Option<KeyCursor>,
}

/// The query of secret rotation.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RotateQuery {
    /// `true` keeps the tokens issued under the old secret valid until they expire; by default
    /// (`false`) they are revoked with it. Anything else is 400 invalid_field.
    keep_tokens: Option<bool>,
}

/// List OAuth clients
///
/// Keyset pages ordered by client_id. Requires the Manage Clients permission.
#[utoipa::path(get, operation_id = "listClients", path = "/admin/v1/clients", tag = "clients",
    params(ClientListQuery),
    responses((status = 200, description = "A page of clients (never their secrets)", body = ClientPage)))]
pub async fn list(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    query: Query<ClientListQuery>,
) -> Result<HttpResponse, ApiError> {
    let q = query.read()?;
    let limit = Limit::of(q.limit);
    let after = KeyCursor::after(q.cursor);
    let mut rows =
        directory::list_clients(&state.db, &caller.company, after.as_deref(), limit + 1).await?;
    Ok(HttpResponse::Ok().json(page(
        &mut rows,
        limit,
        |c| encode_cursor(&c.client_id),
        client_view,
    )))
}

/// Read an OAuth client
///
/// Requires the Manage Clients permission.
#[utoipa::path(get, operation_id = "getClient", path = "/admin/v1/clients/{client_id}", tag = "clients",
    params(("client_id" = String, Path, description = "The client's id")),
    responses(
        (status = 200, description = "The client", body = ClientRecord,
            headers(("ETag" = String, description = "W/\"<version>\"; send it back in If-Match"))),
        (status = 404, description = "No such client in the caller's company", body = common::error::ErrorBody)))]
pub async fn get(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
) -> Result<HttpResponse, ApiError> {
    let client = stored::load::<OAuthClient>(&state, &caller.company, &client_id).await?;
    Ok(ok_with_etag(client.version, client_view(&client)))
}

/// Create an OAuth client
///
/// The answer carries the client's secret (none for a public client), shown this once. Requires the
/// Manage Clients permission.
#[utoipa::path(post, operation_id = "createClient", path = "/admin/v1/clients", tag = "clients",
    request_body = ClientBody,
    responses(
        (status = 201, description = "The new client with its secret", body = ClientWithSecret,
            headers(("ETag" = String, description = "W/\"<version>\""), ("Location" = String, description = "The client's path"),
                ("Cache-Control" = String, description = "no-store")))))]
pub async fn create(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    body: StrictJson<ClientBody>,
) -> Result<HttpResponse, ApiError> {
    let spec = body.0.validate(None)?;
    check_admin_access(&caller, spec.admin_access)?;
    let (client, secret) = new_client(&caller.company, &spec, &state.secret, caller.username());
    let mut fields = client.audit_view();
    if client.secret_hash.is_some() {
        fields.insert("secret".into(), audit::CHANGED.into());
    }
    let tx = state.db.begin().await?;
    stored::create(&state, tx, &caller, &client, &fields).await?;
    Ok(HttpResponse::Created()
        .insert_header((
            "Location",
            format!("/admin/v1/clients/{}", client.client_id),
        ))
        .insert_header(("ETag", etag(client.version)))
        .insert_header(("Cache-Control", "no-store"))
        .json(with_secret(&client, secret.as_deref())))
}

/// Replace an OAuth client
///
/// A client cannot switch between public and confidential. Requires the Manage Clients permission.
#[utoipa::path(put, operation_id = "replaceClient", path = "/admin/v1/clients/{client_id}", tag = "clients",
    params(("client_id" = String, Path, description = "The client's id"), IfMatch),
    request_body = ClientBody,
    responses(
        (status = 200, description = "The changed client", body = ClientRecord,
            headers(("ETag" = String, description = "The new version, W/\"<version>\""))),
        (status = 404, description = "No such client in the caller's company", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn replace(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    if_match: IfMatch,
    body: StrictJson<ClientBody>,
) -> Result<HttpResponse, ApiError> {
    let current = stored::load::<OAuthClient>(&state, &caller.company, &client_id).await?;
    if body.client_id().is_some_and(|id| id != current.client_id) {
        return Err(ApiError::field(
            "client_id",
            "client_id cannot be changed (it must match the path or be left out)",
        ));
    }
    let spec = body.0.validate(Some(&current))?;
    // A body that would be refused anyway is refused for itself, whatever its precondition (RFC 9110,
    // section 13.2.1).
    if_match.require(OAuthClient::KIND, current.version)?;
    check_admin_access(&caller, current.admin_access || spec.admin_access)?;
    let mut client = current.clone();
    client.name = spec.name;
    client.grant_types = spec.grant_types;
    client.redirect_uris = spec.redirect_uris;
    client.scopes = spec.scopes;
    client.issue_refresh_token = spec.issue_refresh_token;
    client.access_token_ttl = spec.access_token_ttl;
    client.refresh_token_ttl = spec.refresh_token_ttl;
    client.admin_access = spec.admin_access;
    client.stamp(caller.username(), Utc::now());
    let tx = state.db.begin().await?;
    stored::replace(&state, tx, &caller, &current, &client, &client.audit_view()).await?;
    Ok(ok_with_etag(client.version, client_view(&client)))
}

/// Delete an OAuth client
///
/// Its access tokens (user tokens issued through it included) and refresh tokens are revoked with it.
/// Requires the Manage Clients permission.
#[utoipa::path(delete, operation_id = "deleteClient", path = "/admin/v1/clients/{client_id}", tag = "clients",
    params(("client_id" = String, Path, description = "The client's id"), IfMatch),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such client in the caller's company", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn delete(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let current = stored::load::<OAuthClient>(&state, &caller.company, &client_id).await?;
    if_match.require(OAuthClient::KIND, current.version)?;
    check_admin_access(&caller, current.admin_access)?;
    let mut tx = state.db.begin().await?;
    let now_ms = Utc::now().timestamp_millis();
    revoke::client_deleted(&mut tx, &caller.company, &current.client_id, now_ms).await?;
    stored::delete(&state, tx, &caller, &current).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Rotate a client's secret
///
/// A new secret replaces the old one at once; it is shown in this answer only. The tokens issued under
/// the old secret (access tokens, user tokens and refresh tokens alike) are revoked with it, unless
/// `keep_tokens=true`. Requires the Manage Clients permission.
#[utoipa::path(post, operation_id = "rotateClientSecret", path = "/admin/v1/clients/{client_id}/secret", tag = "clients",
    params(("client_id" = String, Path, description = "The client's id"), RotateQuery, IfMatch),
    responses(
        (status = 200, description = "The client with its new secret", body = ClientWithSecret,
            headers(("ETag" = String, description = "The new version, W/\"<version>\""), ("Cache-Control" = String, description = "no-store"))),
        (status = 404, description = "No such client in the caller's company", body = common::error::ErrorBody),
        (status = 412, description = "If-Match names another version", body = common::error::ErrorBody),
        (status = 428, description = "If-Match is missing, empty or *", body = common::error::ErrorBody)))]
pub async fn rotate_secret(
    caller: Caller<ManageClients>,
    state: Data<AdminState>,
    client_id: Path<String>,
    query: Query<RotateQuery>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let keep_tokens = query.read()?.keep_tokens.unwrap_or(false);
    let current = stored::load::<OAuthClient>(&state, &caller.company, &client_id).await?;
    if_match.require(OAuthClient::KIND, current.version)?;
    check_admin_access(&caller, current.admin_access)?;
    if current.is_public() {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "a public client has no secret to rotate",
        ));
    }
    let secret = generate_client_secret();
    let hash = hash_client_secret(&state.secret, &secret);
    // Later than the secret it replaces, to the millisecond its tokens are told apart by.
    let now = match current.secret_rotated_on {
        Some(before) => Utc::now().max(before + chrono::Duration::milliseconds(1)),
        None => Utc::now(),
    };
    let id = &current.client_id;
    let mut tx = state.db.begin().await?;
    // Against the version read: of rotations racing with the same If-Match, one wins and the others get
    // 412, rather than each being shown a secret that a later one replaced.
    directory::set_client_secret_if_version(
        &mut tx,
        &caller.company,
        id,
        current.version,
        &hash,
        now,
    )
    .await?;
    let client = directory::get_client(&mut tx, &caller.company, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("client {id} not found")))?;
    if !keep_tokens {
        // As stored, so that it equals what the token service reads and puts in the new tokens.
        let set_ms = client.secret_rotated_on.unwrap_or(now).timestamp_millis();
        revoke::client_secret_rotated(&mut tx, &caller.company, id, set_ms).await?;
    }
    audit::commit(
        &state,
        tx,
        &caller,
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
