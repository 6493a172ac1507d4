//! Revoking the tokens of a client or a user in the transaction of the change that calls for it: deleting
//! a client, rotating its secret (unless asked to keep its tokens), blocking, deactivating or deleting a
//! user. The revocation list (the `revocation` crate) keeps one entry per holder, which every service
//! consults next to its list of single tokens, so a change and the end of its tokens commit together
//! and every service refuses them once its revocation cache (`revocation_cache_ms`, here
//! `read_cache_ms`) lets the answer through.

use common::db::Tx;
use common::ApiError;
use directory::MAX_ACCESS_TOKEN_TTL;
use revocation::Holder;

/// How long an entry that revokes by issue time is kept: past the longest access-token lifetime, with an
/// hour to spare for tokens a token-service replica issued from its cached record of a deleted client and
/// for clocks that differ. Refresh tokens of a deleted client or a blocked user are refused without it
/// (no client authenticates as a deleted one; the directory ends a blocked user's sessions).
const KEPT_MS: i64 = (MAX_ACCESS_TOKEN_TTL + 3_600) * 1000;

/// Every token of a deleted client: access tokens, user tokens issued through it included.
pub async fn client_deleted(
    tx: &mut Tx,
    company: &str,
    client_id: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    let holder = Holder::Client(client_id);
    let kept = Some(now_ms.saturating_add(KEPT_MS));
    revocation::revoke_issued_before(tx, company, holder, revocation::ALL, kept).await?;
    Ok(())
}

/// The tokens of a client issued under a secret set before `secret_set_ms`, its new secret's; kept for
/// as long as the client exists, since its refresh tokens may live for ever.
pub async fn client_secret_rotated(
    tx: &mut Tx,
    company: &str,
    client_id: &str,
    secret_set_ms: i64,
) -> Result<(), ApiError> {
    let holder = Holder::Client(client_id);
    revocation::revoke_issued_before(tx, company, holder, secret_set_ms, None).await?;
    Ok(())
}

/// The access tokens of a user blocked or deactivated at `ended_ms`, its new `sessions_valid_after_ms`:
/// those issued while its sessions were valid from before.
pub async fn user_shut_out(
    tx: &mut Tx,
    company: &str,
    user_id: &str,
    ended_ms: i64,
) -> Result<(), ApiError> {
    let holder = Holder::User(user_id);
    let kept = Some(ended_ms.saturating_add(KEPT_MS));
    revocation::revoke_issued_before(tx, company, holder, ended_ms, kept).await?;
    Ok(())
}

/// Every access token of a deleted user.
pub async fn user_deleted(
    tx: &mut Tx,
    company: &str,
    user_id: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    let holder = Holder::User(user_id);
    let kept = Some(now_ms.saturating_add(KEPT_MS));
    revocation::revoke_issued_before(tx, company, holder, revocation::ALL, kept).await?;
    Ok(())
}
