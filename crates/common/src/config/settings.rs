//! The settings every service has (listen address, database, secret key, logs, workers, the token
//! service's public URL), declared and validated once. Each service flattens `CommonSettings` into its own
//! configuration, so the keys stay top-level: `addr` in the file, `SPEECH_AUTH_ADDR` / `SPEECH_ADMIN_ADDR`
//! and the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, ...) in the environment, exactly as before.
//! docs/configuration.md lists them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::checks::{require_http_url, require_socket_addr, ConfigError};
use super::confidential::Confidential;
use crate::secrets::SecretKey;

#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonSettings {
    /// Listen address, `host:port`.
    pub addr: String,
    /// The token service's public base URL; token issuers are `<public_auth_url>/oauth/<company>`. Each
    /// service says what it falls back to when this is unset.
    pub public_auth_url: Option<String>,
    /// `postgres://...` or `sqlite://...`; every service of an installation uses the same database.
    pub database_url: String,
    pub db_max_connections: u32,
    /// Base64 of at least 32 random bytes, the same for every service: it keys client-secret hashes and
    /// seals signing keys.
    pub secret_key: Option<Confidential>,
    /// `json` (one object per line, for log shippers) or `text`.
    pub log_format: String,
    /// HTTP worker threads; 0 is one per core.
    pub workers: usize,
    /// Client connections served at once; past them, connections are kept only for the operational
    /// endpoints (`reserved_connections`), then closed as they come.
    pub max_connections: usize,
    /// Connections past `max_connections` that may still ask `/healthz`, `/readyz` and `/metrics` (any
    /// other request on them is answered 503).
    pub reserved_connections: usize,
    /// Seconds a request body may take to arrive, plus one for every `body_min_rate` bytes that did:
    /// a body slower than that is answered 408 and its connection closed.
    pub body_timeout_secs: u64,
    /// Bytes per second a request body must keep up past `body_timeout_secs`.
    pub body_min_rate: u64,
}

/// As derived, with the database URL's password hidden (the key is [`Confidential`]).
impl fmt::Debug for CommonSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommonSettings")
            .field("addr", &self.addr)
            .field("public_auth_url", &self.public_auth_url)
            .field("database_url", &crate::db::redact(&self.database_url))
            .field("db_max_connections", &self.db_max_connections)
            .field("secret_key", &self.secret_key)
            .field("log_format", &self.log_format)
            .field("workers", &self.workers)
            .field("max_connections", &self.max_connections)
            .field("reserved_connections", &self.reserved_connections)
            .field("body_timeout_secs", &self.body_timeout_secs)
            .field("body_min_rate", &self.body_min_rate)
            .finish()
    }
}

impl CommonSettings {
    /// How a resource service verifies access tokens: keys fetched from `auth_url`, issuers under
    /// `public_auth_url` (which defaults to `auth_url`).
    pub fn verifier_config(&self, auth_url: &str) -> crate::jwt::VerifierConfig {
        let public = self.public_auth_url.as_deref().unwrap_or(auth_url);
        crate::jwt::VerifierConfig::new(auth_url, public)
    }

    /// The compiled defaults of a service that listens on `addr`.
    pub fn with_addr(addr: &str) -> CommonSettings {
        CommonSettings {
            addr: addr.to_string(),
            public_auth_url: None,
            database_url: "sqlite://./data/speech.db".into(),
            db_max_connections: 16,
            secret_key: None,
            log_format: "json".into(),
            workers: 0,
            max_connections: 10_000,
            reserved_connections: 32,
            body_timeout_secs: 30,
            body_min_rate: 16 * 1024,
        }
    }

    /// The limits of the service's HTTP server.
    pub fn http_limits(&self) -> crate::http::limits::HttpLimits {
        crate::http::limits::HttpLimits {
            max_connections: self.max_connections,
            reserved_connections: self.reserved_connections,
            body_timeout: std::time::Duration::from_secs(self.body_timeout_secs),
            body_min_rate: self.body_min_rate,
        }
    }

    /// Checks the shared settings; the message names the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        require_socket_addr("addr", &self.addr)?;
        if let Some(url) = &self.public_auth_url {
            require_http_url("public_auth_url", url)?;
        }
        if self.database_url.trim().is_empty() {
            return Err(ConfigError("database_url must not be empty".into()));
        }
        if self.db_max_connections == 0 {
            return Err(ConfigError("db_max_connections must be positive".into()));
        }
        if !["json", "text"]
            .iter()
            .any(|f| self.log_format.eq_ignore_ascii_case(f))
        {
            return Err(ConfigError(format!(
                "log_format must be json or text, got {:?}",
                self.log_format
            )));
        }
        if self.max_connections == 0 || self.reserved_connections == 0 {
            return Err(ConfigError(format!(
                "max_connections and reserved_connections must be positive, got {} and {}",
                self.max_connections, self.reserved_connections
            )));
        }
        if self.body_timeout_secs == 0 || self.body_min_rate == 0 {
            return Err(ConfigError(format!(
                "body_timeout_secs and body_min_rate must be positive, got {} and {}",
                self.body_timeout_secs, self.body_min_rate
            )));
        }
        self.secret()?;
        Ok(())
    }

    /// The decoded secret key; an error when it is missing or too short.
    pub fn secret(&self) -> Result<SecretKey, ConfigError> {
        let text = self.secret_key.as_ref().map(Confidential::expose).ok_or_else(|| {
            ConfigError(
                "secret_key is required (SPEECH_SECRET_KEY: base64 of at least 32 random bytes, the same for every service)"
                    .into(),
            )
        })?;
        SecretKey::from_base64(text).map_err(|e| ConfigError(format!("secret_key: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> CommonSettings {
        CommonSettings {
            secret_key: Some(SecretKey::generate().to_base64().into()),
            ..CommonSettings::with_addr("127.0.0.1:8081")
        }
    }

    fn error_of(change: impl FnOnce(&mut CommonSettings)) -> String {
        let mut settings = valid();
        change(&mut settings);
        settings.validate().expect_err("invalid").0
    }

    #[test]
    fn defaults_with_a_secret_key_are_valid() {
        valid().validate().expect("valid");
    }

    #[test]
    fn each_invalid_setting_is_named() {
        assert!(error_of(|s| s.addr = "localhost".into()).contains("addr"));
        assert!(error_of(|s| s.public_auth_url = Some("auth".into())).contains("public_auth_url"));
        assert!(error_of(|s| s.database_url = " ".into()).contains("database_url"));
        assert!(error_of(|s| s.db_max_connections = 0).contains("db_max_connections"));
        assert!(error_of(|s| s.log_format = "pretty".into()).contains("log_format"));
        assert!(error_of(|s| s.secret_key = None).contains("secret_key"));
        assert!(error_of(|s| s.max_connections = 0).contains("max_connections"));
        assert!(error_of(|s| s.reserved_connections = 0).contains("reserved_connections"));
        assert!(error_of(|s| s.body_timeout_secs = 0).contains("body_timeout_secs"));
        assert!(error_of(|s| s.body_min_rate = 0).contains("body_min_rate"));
        assert!(error_of(|s| s.secret_key = Some("c2hvcnQ=".into())).contains("secret_key"));
    }

    #[test]
    fn debug_shows_neither_the_key_nor_the_database_password() {
        let mut settings = valid();
        settings.database_url = "postgres://speech:db-pass-123@db.example/speech".into();
        let key = settings.secret_key.clone().unwrap();
        let printed = format!("{settings:?}");
        assert!(!printed.contains(key.expose()), "{printed}");
        assert!(!printed.contains("db-pass-123"), "{printed}");
        assert!(printed.contains("db.example"), "{printed}");
        assert!(printed.contains("127.0.0.1:8081"), "{printed}");
    }

    #[test]
    fn log_format_ignores_case() {
        let mut settings = valid();
        settings.log_format = "TEXT".into();
        settings.validate().expect("valid");
    }
}
