//! The settings every service has (listen address, database, secret key, logs, workers, the token
//! service's public URL), declared and validated once. Each service flattens `CommonSettings` into its own
//! configuration, so the keys stay top-level: `addr` in the file, `SPEECH_AUTH_ADDR` / `SPEECH_ADMIN_ADDR`
//! and the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, ...) in the environment, exactly as before.
//! docs/configuration.md lists them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{require_http_url, require_socket_addr, ConfigError};
use crate::config::Confidential;
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
