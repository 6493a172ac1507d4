//! `/callbacks/<company>/secret`: the key a company's result callbacks are signed with
//! (docs/transcription.md, Signatures). `GET` reads it; `POST` rotates it, for a secret that leaked or
//! a receiver that changed hands: the next attempt of every delivery is signed with the new secret, and
//! for `callback_secret_overlap_s` (a day by default) with the replaced one too, so receivers switch
//! without refusing a post. Both need `analytics:write`, a read too: whoever holds the secret can forge
//! posts the company's receivers take as the service's. Answers are never cached.

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use scoring::names::CompanyName;

use crate::state::TranscriptionState;
use analytics_core::access::{Authorized, Write};
use analytics_core::error::AnalyticsError;
use callbacks::secrets::{self, SecretRecord, Signing};

type Answer = Result<HttpResponse, AnalyticsError>;

fn answer(signing: &Signing) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(signing.record())
}

fn server_key(state: &TranscriptionState) -> Result<&common::secrets::SecretKey, AnalyticsError> {
    state
        .callbacks
        .server_key()
        .ok_or_else(|| AnalyticsError::internal("the service has no key to sign callbacks with"))
}

/// Read the company's callback secret
#[utoipa::path(get, path = "/callbacks/{company}/secret", tag = "transcription",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path)),
    responses((status = 200, body = SecretRecord,
        headers(("Cache-Control" = String, description = "no-store")))))]
pub async fn get_secret(
    state: Data<TranscriptionState>,
    _: Authorized<Write>,
    path: Path<CompanyName>,
) -> Answer {
    let company = path.into_inner();
    let overlap = state.callbacks.secret_overlap;
    let signing = secrets::signing(&state.db, server_key(&state)?, &company, overlap).await?;
    Ok(answer(&signing))
}

/// Rotate the company's callback secret
///
/// Answers the new secret. Posts carry a signature of the replaced one too until
/// `previous_signs_until`; the one before that stops at once.
#[utoipa::path(post, path = "/callbacks/{company}/secret", tag = "transcription",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path)),
    responses((status = 200, body = SecretRecord,
        headers(("Cache-Control" = String, description = "no-store")))))]
pub async fn rotate_secret(
    state: Data<TranscriptionState>,
    access: Authorized<Write>,
    path: Path<CompanyName>,
) -> Answer {
    let company = path.into_inner();
    let overlap = state.callbacks.secret_overlap;
    let signing = secrets::rotate(&state.db, server_key(&state)?, &company, overlap).await?;
    tracing::info!(
        company = %company,
        generation = signing.generation,
        by = %access.access.claims.sub,
        "callback secret rotated"
    );
    Ok(answer(&signing))
}
