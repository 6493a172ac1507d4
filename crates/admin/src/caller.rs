//! Who is calling: the `guard` middleware in front of every `/admin/v1` endpoint verifies the bearer token
//! (with the common `Authenticated` extractor, whose verifier remembers verified tokens), refuses revoked
//! tokens, loads the calling account (one statement reads the account, its permissions and the token's
//! revocation when the replica's caches do not hold them), applies the per-account rate limits and cuts
//! off requests that run too long. The `Caller<P>` extractor then requires permission `P` of that account.
//!
//! Order of refusals: 401 (no, bad or revoked token; a revoked token is refused before it is counted, so
//! it cannot use up its owner's quota), 429 (limits), 403 (client-credentials token, a user token of a
//! client without administration access, no API access, blocked or inactive account, missing
//! permission).
//!
//! Least privilege: a caller may grant only permissions it holds itself, and may not change a user or a
//! role that holds a permission it lacks (`require_all`).

use std::collections::HashSet;
use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest, ResponseError};
use common::jwt::Authenticated;
use common::{ApiError, ErrorCode};
use directory::{permissions, User, UserAccess};

use crate::rate_limit::{Decision, Exceeded};
use crate::state::{AdminState, CallerRecord};

/// A permission an endpoint requires, as a type so that a handler cannot forget to check it.
pub trait Permission: 'static {
    const NAME: &'static str;
}

pub struct ManageUsers;
pub struct ManageRoles;
pub struct ManageClients;
pub struct ViewAuditLog;

impl Permission for ManageUsers {
    const NAME: &'static str = permissions::MANAGE_USERS;
}
impl Permission for ManageRoles {
    const NAME: &'static str = permissions::MANAGE_ROLES;
}
impl Permission for ManageClients {
    const NAME: &'static str = permissions::MANAGE_CLIENTS;
}
impl Permission for ViewAuditLog {
    const NAME: &'static str = permissions::VIEW_AUDIT_LOG;
}

/// The calling account, allowed permission `P`. Its company is the token's: every operation is scoped to
/// it, whatever the request says.
pub struct Caller<P> {
    pub company: String,
    record: Arc<CallerRecord>,
    _permission: PhantomData<fn() -> P>,
}

impl<P> Caller<P> {
    pub fn user(&self) -> &User {
        &self.record.user
    }

    pub fn username(&self) -> &str {
        &self.record.user.username
    }

    pub fn has(&self, permission: &str) -> bool {
        self.record.permissions.contains(permission)
    }

    /// Refuses (403) unless the caller holds every one of `permissions`; `what` says what holds or would
    /// grant them, e.g. "user bob" or "the roles you assign".
    pub fn require_all<S: AsRef<str>>(
        &self,
        permissions: &[S],
        what: &str,
    ) -> Result<(), ApiError> {
        let mut missing: Vec<&str> = permissions
            .iter()
            .map(AsRef::as_ref)
            .filter(|p| !self.has(p))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        missing.sort_unstable();
        missing.dedup();
        Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "{what} holds permissions you do not have ({}); only a caller holding them may do this",
                missing.join(", ")
            ),
        ))
    }
}

/// The scope a user token carries when its client has administration access.
pub const ADMIN_SCOPE: &str = "admin";

impl<P: Permission> FromRequest for Caller<P> {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    /// The account the guard loaded, required to hold `P`.
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let extensions = req.extensions();
        let caller = match (
            extensions.get::<Authenticated>(),
            extensions.get::<Arc<CallerRecord>>(),
        ) {
            (Some(claims), Some(record)) => permitted::<P>(claims, record.clone()),
            // Only routes behind the guard take a Caller.
            _ => Err(ApiError::internal("the administration guard did not run")),
        };
        std::future::ready(caller)
    }
}

/// The caller, if its account may use the administration API and its roles grant `P`.
fn permitted<P: Permission>(
    claims: &Authenticated,
    record: Arc<CallerRecord>,
) -> Result<Caller<P>, ApiError> {
    let user = &record.user;
    if !user.api_access {
        return Err(ApiError::new(
            ErrorCode::ApiAccessDisabled,
            "API access is not enabled for this account",
        ));
    }
    if !user.can_log_in() {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this account is blocked or inactive",
        ));
    }
    if !record.permissions.contains(P::NAME) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("this endpoint requires the {} permission", P::NAME),
        ));
    }
    Ok(Caller {
        company: claims.company.clone(),
        record,
        _permission: PhantomData,
    })
}

/// Refuses tokens that cannot use the administration API at all: client-credentials tokens and user
/// tokens of clients without administration access.
fn admin_token(claims: &Authenticated) -> Result<(), ApiError> {
    if !claims.is_user_token() {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "a client-credentials token cannot use the administration API: sign in as a user",
        ));
    }
    if !claims.has_scope(ADMIN_SCOPE) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this token was issued to a client without administration access: sign in through a \
             client whose admin_access setting is on",
        ));
    }
    Ok(())
}

/// Whether the token is revoked and, for a token that may use the administration API, its account with
/// the permissions of its roles (`None` when the account no longer exists). Both come from the
/// replica's short-lived caches when they hold them; otherwise one statement reads the account and asks
/// the revocation list at once.
async fn load_caller(
    state: &AdminState,
    claims: &Authenticated,
) -> Result<(bool, Option<Arc<CallerRecord>>), ApiError> {
    if admin_token(claims).is_err() {
        let revoked =
            revocation::is_token_revoked_cached(&state.db, &state.revocations, &issued(claims))
                .await?;
        return Ok((revoked, None));
    }
    let cached = state.revocations.get(claims.jti.as_str());
    let key = (claims.company.clone(), claims.sub.clone());
    if let (Some(revoked), Some(record)) = (cached, state.callers.get(&key)) {
        return Ok((revoked, Some(record)));
    }
    let probe = revocation::token_revoked(&issued(claims));
    let read =
        directory::get_user_with_permissions(&state.db, &claims.company, &claims.sub, Some(&probe))
            .await?;
    let Some(UserAccess {
        user,
        permissions,
        probe: revoked,
    }) = read
    else {
        // No account: the token is refused as one whose account is gone, revoked or not.
        return Ok((false, None));
    };
    let permissions: HashSet<String> = permissions.into_iter().collect();
    let record = Arc::new(CallerRecord { user, permissions });
    state.revocations.insert(claims.jti.clone(), revoked);
    state.callers.insert(key, record.clone());
    Ok((revoked, Some(record)))
}

/// What the revocation list is asked about the token.
fn issued(claims: &Authenticated) -> revocation::Issued<'_> {
    revocation::Issued::from(&**claims)
}

/// Middleware of the `/admin/v1` scope: authentication, rate limits, revocation, time-out, rate-limit
/// headers.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<AdminState>>().cloned() else {
        return Ok(
            req.into_response(ApiError::internal("no AdminState configured").error_response())
        );
    };
    // No clone of the request may outlive this point: routing below needs it unshared.
    let authenticated = Authenticated::from_request(req.request(), &mut Payload::None);
    let claims = match authenticated.await {
        Ok(claims) => claims,
        Err(e) => return Ok(req.into_response(e.error_response())),
    };

    let (revoked, record) = match load_caller(&state, &claims).await {
        Ok(loaded) => loaded,
        Err(e) => return Ok(req.into_response(e.error_response())),
    };
    if revoked {
        let e = ApiError::new(ErrorCode::InvalidToken, "the token has been revoked");
        return Ok(req.into_response(e.error_response()));
    }

    let decision = if state
        .limiter
        .is_exempt(&claims.company, claims.username.as_deref())
    {
        None
    } else {
        let account = format!("{}/{}", claims.company, claims.sub);
        Some(state.limiter.check(&account).await)
    };
    if let Some(Decision {
        outcome: Err(exceeded),
        ..
    }) = &decision
    {
        let error = match exceeded {
            Exceeded::Second => ApiError::new(
                ErrorCode::RateLimited,
                format!(
                    "more than {} requests per second for this account",
                    state.config.rate_limit_per_second
                ),
            )
            .with_retry_after(1),
            Exceeded::Day => {
                let wait = decision
                    .as_ref()
                    .and_then(|d| d.day)
                    .map_or(3600, |d| d.reset_secs);
                ApiError::new(
                    ErrorCode::DailyLimitReached,
                    format!(
                        "the daily limit of {} requests for this account is reached; it resets at 00:00 UTC",
                        state.config.rate_limit_per_day
                    ),
                )
                .with_retry_after(wait)
            }
        };
        let mut response = req.into_response(error.error_response());
        add_rate_headers(response.headers_mut(), decision.as_ref());
        return Ok(response);
    }

    // Refusals of the token's kind and of a vanished account come after the limits, as documented.
    let record = match (admin_token(&claims), record) {
        (Err(e), _) => {
            let mut response = req.into_response(e.error_response());
            add_rate_headers(response.headers_mut(), decision.as_ref());
            return Ok(response);
        }
        (Ok(()), None) => {
            let e = ApiError::new(
                ErrorCode::InvalidToken,
                "the account of this token no longer exists",
            );
            let mut response = req.into_response(e.error_response());
            add_rate_headers(response.headers_mut(), decision.as_ref());
            return Ok(response);
        }
        (Ok(()), Some(record)) => record,
    };
    req.extensions_mut().insert(claims);
    req.extensions_mut().insert(record);
    // A request cut off is answered as an error, which actix turns into the response.
    let mut response =
        match tokio::time::timeout(state.config.request_timeout(), next.call(req)).await {
            Ok(response) => response?.map_into_boxed_body(),
            Err(_) => {
                return Err(ApiError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the request took longer than {} ms and was cut off",
                        state.config.request_timeout_ms
                    ),
                )
                .into())
            }
        };
    add_rate_headers(response.headers_mut(), decision.as_ref());
    Ok(response)
}

/// `X-RateLimit-Limit`, `-Remaining` and `-Reset` for the one-second window, and the same names with a
/// `-Day` suffix for the daily window.
fn add_rate_headers(headers: &mut actix_web::http::header::HeaderMap, decision: Option<&Decision>) {
    let Some(decision) = decision else {
        return;
    };
    for (suffix, window) in [("", decision.second), ("-Day", decision.day)] {
        let Some(w) = window else {
            continue;
        };
        for (name, value) in [
            ("X-RateLimit-Limit", w.limit.to_string()),
            ("X-RateLimit-Remaining", w.remaining.to_string()),
            ("X-RateLimit-Reset", w.reset_secs.to_string()),
        ] {
            if let (Ok(name), Ok(value)) = (
                HeaderName::try_from(format!("{name}{suffix}")),
                HeaderValue::try_from(value),
            ) {
                headers.insert(name, value);
            }
        }
    }
}
