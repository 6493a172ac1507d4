use serde::{Deserialize, Serialize};

/// The audience of every access token the platform issues: its own APIs.
pub const DEFAULT_AUDIENCE: &str = "speech-platform";

/// The JOSE `typ` of access tokens (RFC 9068), so an ID token is never accepted as an access token.
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";

/// Claims of an access token (docs/decisions.md, Tenancy and tokens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    /// The user's id for user tokens; the client id for client-credentials tokens.
    pub sub: String,
    pub aud: String,
    pub exp: i64,
    pub iat: i64,
    pub jti: String,
    /// Space-separated scopes.
    pub scope: String,
    pub client_id: String,
    /// The company short name: the tenant this token belongs to.
    pub company: String,
    /// The username, on tokens issued to a user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// When the client secret that authenticated the token's issue was set (milliseconds since the
    /// epoch); absent for public clients. Rotating the secret revokes the tokens issued under an earlier
    /// one (the `revocation` crate) by this, not by the issue time, so a token issued from a replica's
    /// cached record of the old secret after the rotation is revoked too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_set_ms: Option<i64>,
    /// On user tokens, the user's `sessions_valid_after_ms` at the issue, when set: the last time a
    /// password change, block, deactivation or re-activation ended the user's sessions. Blocking the user
    /// revokes the tokens issued before it by this, to the millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_valid_after_ms: Option<i64>,
}

impl AccessClaims {
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scope.split_ascii_whitespace()
    }

    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes().any(|s| s == scope)
    }

    /// Whether a user (not only a client) stands behind this token.
    pub fn is_user_token(&self) -> bool {
        self.username.is_some()
    }
}
