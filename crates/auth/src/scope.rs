//! Scopes of the authorization-code flow (docs/token-service.md). Without a `scope` parameter the grant
//! lists every user scope below; `scope=refreshToken` asks for a refresh token and is echoed as given.
//! An API scope (`analytics:read`, ...) is granted to a user only when asked for and allowed to the
//! client: the web console's client asks for the analytics scopes this way.

use crate::error::{OAuthError, OAuthErrorCode};

pub const REFRESH_TOKEN: &str = "refreshToken";
pub const OPENID: &str = "openid";
pub const PROFILE: &str = "profile";
pub const EMAIL: &str = "email";
pub const PHONE: &str = "phone";
pub const ADDRESS: &str = "address";
/// Carried by user access tokens of clients with administration access; never requested, never granted
/// through the `scope` parameter.
pub const ADMIN: &str = "admin";

/// The scopes a user may be granted, in the order the default grant lists them.
pub const USER_SCOPES: &[&str] = &[REFRESH_TOKEN, OPENID, EMAIL, PROFILE, PHONE, ADDRESS];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// Space-separated, as it appears in the token response.
    pub scope: String,
    /// Whether the request asked for a refresh token (`scope` named refreshToken).
    pub refresh_requested: bool,
}

/// The grant for the `scope` parameter of an authorization request by a client allowed `client_scopes`
/// (its API scopes).
pub fn grant(requested: Option<&str>, client_scopes: &[String]) -> Result<Granted, OAuthError> {
    let Some(requested) = requested else {
        return Ok(Granted {
            scope: USER_SCOPES.join(" "),
            refresh_requested: false,
        });
    };
    let mut scopes: Vec<&str> = Vec::new();
    for s in requested.split_ascii_whitespace() {
        if !USER_SCOPES.contains(&s) && !client_scopes.iter().any(|allowed| allowed == s) {
            return Err(OAuthError::new(
                OAuthErrorCode::InvalidScope,
                format!("unknown scope {s}"),
            ));
        }
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    if scopes.is_empty() {
        return Err(OAuthError::new(
            OAuthErrorCode::InvalidScope,
            "scope is empty",
        ));
    }
    Ok(Granted {
        refresh_requested: scopes.contains(&REFRESH_TOKEN),
        scope: scopes.join(" "),
    })
}

pub fn includes(scope: &str, wanted: &str) -> bool {
    scope.split_ascii_whitespace().any(|s| s == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_lists_every_scope_without_asking_for_refresh() {
        let g = grant(None, &[]).unwrap();
        assert_eq!(g.scope, "refreshToken openid email profile phone address");
        assert!(!g.refresh_requested);
    }

    #[test]
    fn an_api_scope_is_granted_only_when_asked_for_and_allowed_to_the_client() {
        let allowed = vec!["analytics:read".to_string()];
        assert_eq!(
            grant(Some("openid analytics:read"), &allowed)
                .unwrap()
                .scope,
            "openid analytics:read"
        );
        assert!(grant(Some("analytics:write"), &allowed).is_err());
        assert!(grant(Some("analytics:read"), &[]).is_err());
        assert!(!grant(None, &allowed).unwrap().scope.contains("analytics"));
    }

    #[test]
    fn refresh_token_scope_is_echoed() {
        let g = grant(Some("refreshToken"), &[]).unwrap();
        assert_eq!(g.scope, "refreshToken");
        assert!(g.refresh_requested);
        assert_eq!(
            grant(Some("openid refreshToken openid"), &[])
                .unwrap()
                .scope,
            "openid refreshToken"
        );
    }

    #[test]
    fn unknown_scopes_are_refused() {
        assert_eq!(
            grant(Some("openid admin"), &[]).unwrap_err().code,
            OAuthErrorCode::InvalidScope
        );
    }
}
