//! Who may read events and manage projects: a bearer access token of the token service, checked by the
//! common verifier, not revoked, carrying the scope the request needs; a project is reached only with a
//! token of its own company (docs/ingest-api.md, Authentication). Sending events needs no token: the
//! app key in the path is the only credential, as the specification has it.

use std::sync::Arc;

use actix_web::HttpRequest;
use common::jwt::{bearer_token, AccessClaims, VerifyError};
use common::{ApiError, ErrorCode};

use crate::model::Project;
use crate::state::IngestState;

/// Reading events and projects.
pub const READ_SCOPE: &str = "events:read";
/// Creating, changing and deleting projects.
pub const MANAGE_SCOPE: &str = "events:manage";

/// The verified claims of the request's token, which must carry `scope`.
pub async fn authorize(
    state: &IngestState,
    req: &HttpRequest,
    scope: &str,
) -> Result<Arc<AccessClaims>, ApiError> {
    let token = bearer_token(req).ok_or_else(|| {
        ApiError::new(
            ErrorCode::MissingToken,
            "an Authorization: Bearer token is required",
        )
    })?;
    let claims = state.verifier.verify(token).await.map_err(|e| match e {
        VerifyError::KeysUnavailable => ApiError::new(ErrorCode::Unavailable, e.to_string()),
        other => ApiError::new(ErrorCode::InvalidToken, other.to_string()),
    })?;
    if revocation::is_token_revoked_cached(&state.db, &state.revocations, &(&*claims).into())
        .await?
    {
        return Err(ApiError::new(
            ErrorCode::InvalidToken,
            "the token has been revoked",
        ));
    }
    if !claims.has_scope(scope) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("this token lacks the {scope} scope"),
        ));
    }
    Ok(claims)
}

/// The project of `app_key` when it belongs to the token's company. Another company's project is
/// answered exactly as a missing one, so a token learns nothing about other tenants' keys.
pub async fn own_project(
    state: &IngestState,
    claims: &AccessClaims,
    app_key: &str,
) -> Result<Project, ApiError> {
    match crate::store::project(&state.db, app_key).await? {
        Some(project) if project.company == claims.company => Ok(project),
        _ => Err(ApiError::not_found(format!(
            "no project with app key {app_key}"
        ))),
    }
}
