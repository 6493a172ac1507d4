//! Where the console is and what it talks to. The analytics service fills these from its own
//! configuration (`console_url`, `console_api_url`, `auth_url`, `public_auth_url`).

use serde::{Deserialize, Serialize};

use crate::client;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConsoleSettings {
    /// The console's address as browsers reach it, without `/console` (`http://127.0.0.1:8083`): its
    /// sign-in callback is `<public_url>/console/<company>/callback`, and its cookie is `Secure` when
    /// this is `https`.
    pub public_url: String,
    /// Where the console's server side calls the analytics API (`http://127.0.0.1:8083`).
    pub api_url: String,
    /// Where the console's server side reaches the token service to exchange a code.
    pub auth_url: String,
    /// The token service as browsers reach it: the sign-in and sign-out pages.
    pub public_auth_url: String,
}

impl ConsoleSettings {
    /// Whether the session cookie must be `Secure`.
    pub fn secure(&self) -> bool {
        self.public_url.starts_with("https://")
    }

    /// The token service's origin as browsers reach it (`public_auth_url` without its path).
    pub fn auth_origin(&self) -> &str {
        let url = self.public_auth_url.as_str();
        let after_scheme = url.find("://").map_or(0, |at| at + 3);
        match url[after_scheme..].find('/') {
            Some(slash) => &url[..after_scheme + slash],
            None => url,
        }
    }

    /// The sign-in callback of `company`'s console client.
    pub fn redirect_uri(&self, company: &str) -> String {
        client::redirect_uri(&self.public_url, company)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_auth_origin_leaves_the_path_out() {
        let mut settings = ConsoleSettings {
            public_url: "https://console.example".into(),
            api_url: "http://127.0.0.1:8083".into(),
            auth_url: "http://auth:8081".into(),
            public_auth_url: "https://login.example:8443/auth/".into(),
        };
        assert_eq!(settings.auth_origin(), "https://login.example:8443");
        settings.public_auth_url = "http://127.0.0.1:8081".into();
        assert_eq!(settings.auth_origin(), "http://127.0.0.1:8081");
        assert!(settings.secure());
        assert_eq!(
            settings.redirect_uri("acme"),
            "https://console.example/console/acme/callback"
        );
    }
}
