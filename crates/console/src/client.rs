//! The console's OAuth client in each company: its id and secret are derived from the server key, so
//! `speechd bootstrap` (which registers it) and the console (which signs in with it) agree without
//! either storing a secret; the token service keeps only the secret's hash. The keys that seal the
//! console's sessions and sign its pending sign-ins derive from the server key too.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::secrets::SecretKey;

/// The name the console's client has in the administration API.
pub const CLIENT_NAME: &str = "console";

/// The scopes the console asks for: it reads and changes analytics data as its user may.
pub const SCOPES: &str = "analytics:read analytics:write";

/// The console client's id in `company`.
pub fn client_id(key: &SecretKey, company: &str) -> String {
    let derived = key.derive(&format!("console client of {company}"));
    derived[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The console client's secret in `company`.
pub fn client_secret(key: &SecretKey, company: &str) -> String {
    URL_SAFE_NO_PAD.encode(key.derive(&format!("console client secret of {company}")))
}

/// The console's sign-in callback for `company`, under the console's public address.
pub fn redirect_uri(public_url: &str, company: &str) -> String {
    format!(
        "{}/console/{company}/callback",
        public_url.trim_end_matches('/')
    )
}

/// The keys the console derives from the server key.
pub struct Keys {
    /// Signs the pending sign-in cookie (state, PKCE verifier, where to go back).
    pub signin: [u8; 32],
    /// Seals the access tokens kept in the session table.
    pub seal: crate::seal::Sealer,
    server: SecretKey,
}

impl Keys {
    pub fn new(key: &SecretKey) -> Keys {
        Keys {
            signin: key.derive("console sign-in"),
            seal: crate::seal::Sealer::new(&key.derive("console session seal")),
            server: key.clone(),
        }
    }

    /// The console client of `company`: its id and secret.
    pub fn client(&self, company: &str) -> (String, String) {
        (
            client_id(&self.server, company),
            client_secret(&self.server, company),
        )
    }
}

/// Where the token service sends the browser after signing out of `company`.
pub fn signed_out_uri(public_url: &str, company: &str) -> String {
    format!(
        "{}/console/{company}/signedout",
        public_url.trim_end_matches('/')
    )
}
