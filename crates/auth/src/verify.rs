//! Verification of the service's own access tokens (userinfo, introspection, revocation): against the
//! company's keys in the key ring, with the revocation list consulted, so a revoked token stops working
//! here at once. Refresh tokens are checked against the list's entry of their client too.

use common::db::StoreError;
use common::jwt::{AccessClaims, ACCESS_TOKEN_TYPE, DEFAULT_AUDIENCE};
use jsonwebtoken::{decode, decode_header, Validation};

use crate::state::AuthState;
use crate::storage::RefreshRecord;

#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    Malformed,
    Rejected,
    Revoked,
}

pub async fn verify_access_token(
    state: &AuthState,
    company: &str,
    token: &str,
) -> Result<AccessClaims, Invalid> {
    let header = decode_header(token).map_err(|_| Invalid::Malformed)?;
    if header.typ.as_deref() != Some(ACCESS_TOKEN_TYPE) {
        return Err(Invalid::Rejected);
    }
    let kid = header.kid.ok_or(Invalid::Malformed)?;
    let keys = state
        .keys
        .get(company)
        .await
        .map_err(|_| Invalid::Rejected)?;
    let (alg, key) = keys.decoding_key(&kid).ok_or(Invalid::Rejected)?;
    if *alg != header.alg {
        return Err(Invalid::Rejected);
    }
    let mut validation = Validation::new(*alg);
    validation.set_audience(&[DEFAULT_AUDIENCE]);
    validation.set_issuer(&[state.issuer(company)]);
    validation.leeway = 0;
    let claims = decode::<AccessClaims>(token, key, &validation)
        .map_err(|_| Invalid::Rejected)?
        .claims;
    if claims.company != company {
        return Err(Invalid::Rejected);
    }
    if revocation::is_token_revoked(&state.db, &(&claims).into())
        .await
        .map_err(|_| Invalid::Rejected)?
    {
        return Err(Invalid::Revoked);
    }
    Ok(claims)
}

/// Whether the refresh token was revoked with its client: its secret was rotated after the token was
/// made (without keeping tokens), or the client was deleted.
pub async fn refresh_revoked_with_client(
    state: &AuthState,
    record: &RefreshRecord,
) -> Result<bool, StoreError> {
    let holder = revocation::Holder::Client(&record.client_id);
    let before = revocation::revoked_before(&state.db, &record.company, holder).await?;
    Ok(before.is_some_and(|before| record.created_ms < before))
}
