//! Signing in with the authorization code flow and PKCE, the console's server side as the client
//! (a backend-for-frontend): the browser is sent to the token service's sign-in page with a random
//! `state` and the challenge of a random verifier, both kept meanwhile in a short-lived cookie signed
//! with the console's key; back at the callback, the `state` must be the cookie's, and the code is
//! exchanged with the client's secret and the verifier. The tokens stay on the server: the browser gets
//! only a session cookie.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::secrets::{constant_time_eq, random_token};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// The cookie that holds a sign-in under way.
pub const PENDING_COOKIE: &str = "console_signin";
/// How long a sign-in may take, in seconds.
pub const PENDING_SECONDS: i64 = 600;

/// A sign-in under way: what the callback must find again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub company: String,
    pub state: String,
    pub verifier: String,
    /// The console page to open once signed in (a path under `/console/<company>/`).
    pub back_to: String,
    pub expires_s: i64,
}

impl Pending {
    /// A new sign-in into `company` that goes back to `back_to`.
    pub fn start(company: &str, back_to: &str, now_s: i64) -> Pending {
        Pending {
            company: company.to_string(),
            state: random_token(24),
            verifier: random_token(32),
            back_to: back_to.to_string(),
            expires_s: now_s + PENDING_SECONDS,
        }
    }

    /// The S256 challenge of the verifier (RFC 7636).
    pub fn challenge(&self) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(self.verifier.as_bytes()))
    }

    /// The cookie's value: the fields and their MAC, each in base64url, joined by `.`.
    pub fn to_cookie(&self, key: &[u8; 32]) -> String {
        let fields = self.fields();
        let mac = mac(key, &fields);
        format!("{fields}.{mac}")
    }

    /// The sign-in a cookie holds, when `key` signed it and it has not expired at `now_s`.
    pub fn from_cookie(value: &str, key: &[u8; 32], now_s: i64) -> Option<Pending> {
        let (fields, tag) = value.rsplit_once('.')?;
        if !constant_time_eq(mac(key, fields).as_bytes(), tag.as_bytes()) {
            return None;
        }
        let mut parts = fields.split('.').map(|part| {
            URL_SAFE_NO_PAD
                .decode(part)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
        });
        let pending = Pending {
            company: parts.next()??,
            state: parts.next()??,
            verifier: parts.next()??,
            back_to: parts.next()??,
            expires_s: parts.next()??.parse().ok()?,
        };
        (parts.next().is_none() && pending.expires_s > now_s).then_some(pending)
    }

    /// Whether `state`, as the callback received it, is this sign-in's.
    pub fn is_state(&self, state: &str) -> bool {
        constant_time_eq(self.state.as_bytes(), state.as_bytes())
    }

    fn fields(&self) -> String {
        [
            self.company.as_str(),
            &self.state,
            &self.verifier,
            &self.back_to,
            &self.expires_s.to_string(),
        ]
        .iter()
        .map(|field| URL_SAFE_NO_PAD.encode(field))
        .collect::<Vec<_>>()
        .join(".")
    }
}

fn mac(key: &[u8; 32], fields: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(fields.as_bytes());
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// A `back_to` the console accepts: a path of the company's console, never another site or page.
pub fn safe_back_to(company: &str, wanted: Option<&str>) -> String {
    let home = format!("/console/{company}/");
    match wanted {
        Some(path)
            if path.starts_with(&home)
                && !path.contains("//")
                && !path.contains('\\')
                && path.chars().all(|c| c.is_ascii_graphic()) =>
        {
            path.to_string()
        }
        _ => home,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_sign_in_comes_back_only_signed_and_in_time() {
        let key = [3; 32];
        let pending = Pending::start("acme", "/console/acme/", 1000);
        let cookie = pending.to_cookie(&key);
        assert_eq!(
            Pending::from_cookie(&cookie, &key, 1001),
            Some(pending.clone())
        );
        assert_eq!(Pending::from_cookie(&cookie, &[4; 32], 1001), None);
        assert_eq!(
            Pending::from_cookie(&cookie, &key, 1000 + PENDING_SECONDS),
            None
        );
        let other = Pending::start("globex", "/console/globex/", 1000).to_cookie(&key);
        let (forged_fields, _) = other.rsplit_once('.').unwrap();
        let (_, tag) = cookie.rsplit_once('.').unwrap();
        assert_eq!(
            Pending::from_cookie(&format!("{forged_fields}.{tag}"), &key, 1001),
            None
        );
        assert!(pending.is_state(&pending.state.clone()));
        assert!(!pending.is_state("guess"));
    }

    #[test]
    fn the_challenge_is_rfc_7636_s256() {
        let pending = Pending {
            verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into(),
            ..Pending::start("acme", "/", 0)
        };
        assert_eq!(
            pending.challenge(),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn only_the_company_s_console_pages_are_gone_back_to() {
        assert_eq!(
            safe_back_to("acme", Some("/console/acme/support/inbox")),
            "/console/acme/support/inbox"
        );
        for wanted in [
            "https://evil.example/",
            "/console/globex/",
            "/console/acme//evil.example",
            "/console/acme/\\x",
        ] {
            assert_eq!(
                safe_back_to("acme", Some(wanted)),
                "/console/acme/",
                "{wanted}"
            );
        }
        assert_eq!(safe_back_to("acme", None), "/console/acme/");
    }
}
