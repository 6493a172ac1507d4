//! Fetching one company's published keys from the token service. Kept apart from the cache so that the
//! cache decides when to fetch and this file only how, and what a failure means: an unknown company
//! (404) is remembered longer than a token service that could not be reached.

use std::collections::HashMap;

use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey};

/// A company's verification keys by key id.
pub(super) type Keys = HashMap<String, (Algorithm, DecodingKey)>;

/// Why a JWKS could not be had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FetchError {
    /// The token service answered 404: it knows no such company.
    UnknownCompany,
    /// The token service could not be reached or answered something other than a JWKS.
    Unavailable,
}

/// GETs `<auth_url>/oauth/<company>/jwks`. `company` must already be a valid company name: it becomes a
/// path segment.
pub(super) async fn fetch(
    http: &reqwest::Client,
    auth_url: &str,
    company: &str,
) -> Result<Keys, FetchError> {
    let url = format!("{auth_url}/oauth/{company}/jwks");
    let response = http.get(&url).send().await.map_err(|e| {
        tracing::warn!(error = %e, %url, "JWKS fetch failed");
        FetchError::Unavailable
    })?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Err(FetchError::UnknownCompany);
    }
    let response = response.error_for_status().map_err(|e| {
        tracing::warn!(error = %e, %url, "JWKS fetch refused");
        FetchError::Unavailable
    })?;
    let set: JwkSet = response.json().await.map_err(|e| {
        tracing::warn!(error = %e, %url, "JWKS unreadable");
        FetchError::Unavailable
    })?;
    Ok(set
        .keys
        .iter()
        .filter_map(|jwk| {
            let kid = jwk.common.key_id.clone()?;
            let alg = algorithm(jwk)?;
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some((kid, (alg, key)))
        })
        .collect())
}

/// The algorithm a key is published for; keys of other algorithms are ignored.
fn algorithm(jwk: &Jwk) -> Option<Algorithm> {
    match jwk.common.key_algorithm? {
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        _ => None,
    }
}
