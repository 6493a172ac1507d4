//! Configuration of the token service. Every key can be set in the file named by `SPEECH_CONFIG` or as
//! `SPEECH_AUTH_<KEY>`; the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, ...) apply too.

use common::config::{require_http_url, require_socket_addr, ConfigError, ServiceConfig};
use common::secrets::SecretKey;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthConfig {
    /// Listen address.
    pub addr: String,
    /// The public base URL of the token service; issuers are `<public_auth_url>/oauth/<company>`.
    /// Defaults to `http://<addr>`.
    pub public_auth_url: Option<String>,
    pub database_url: String,
    pub db_max_connections: u32,
    /// Base64 of at least 32 random bytes; keys client-secret hashes and seals signing keys.
    pub secret_key: Option<String>,
    pub log_format: String,
    /// HTTP worker threads; 0 is one per core.
    pub workers: usize,
    /// Lifetime of an authorization code.
    pub code_ttl_secs: i64,
    /// Lifetime of a browser login session (single sign-on at the authorize endpoint).
    pub session_ttl_secs: i64,
    /// Failed logins in a row that lock an account.
    pub lockout_threshold: i64,
    /// How long a locked account stays locked.
    pub lockout_secs: i64,
    /// Age at which a signing key is replaced.
    pub key_rotation_secs: u64,
    /// How long a replaced key stays published; at least the longest access-token lifetime.
    pub key_overlap_secs: u64,
    /// How long signing keys are cached before the store is read again.
    pub key_cache_secs: u64,
    /// How long an OAuth client record is cached (changes made by the admin service show after this).
    pub client_cache_ms: u64,
    /// Login attempts per client address per minute at the authorize endpoint.
    pub login_attempts_per_minute: u32,
    /// Take the client address from `Forwarded` / `X-Forwarded-For` (only behind a proxy that sets them).
    pub trust_forwarded_for: bool,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            addr: "127.0.0.1:8081".into(),
            public_auth_url: None,
            database_url: "sqlite://./data/speech.db".into(),
            db_max_connections: 16,
            secret_key: None,
            log_format: "json".into(),
            workers: 0,
            code_ttl_secs: 120,
            session_ttl_secs: 8 * 3600,
            lockout_threshold: 5,
            lockout_secs: 900,
            key_rotation_secs: 30 * 24 * 3600,
            key_overlap_secs: 2 * 24 * 3600,
            key_cache_secs: 60,
            client_cache_ms: 1000,
            login_attempts_per_minute: 30,
            trust_forwarded_for: false,
        }
    }
}

impl ServiceConfig for AuthConfig {
    const ENV_PREFIX: &'static str = "SPEECH_AUTH_";

    fn validate(&self) -> Result<(), ConfigError> {
        require_socket_addr("addr", &self.addr)?;
        if let Some(url) = &self.public_auth_url {
            require_http_url("public_auth_url", url)?;
        }
        self.secret()?;
        let positive = [
            ("code_ttl_secs", self.code_ttl_secs),
            ("session_ttl_secs", self.session_ttl_secs),
            ("lockout_threshold", self.lockout_threshold),
            ("lockout_secs", self.lockout_secs),
        ];
        for (key, value) in positive {
            if value <= 0 {
                return Err(ConfigError(format!("{key} must be positive, got {value}")));
            }
        }
        if self.key_rotation_secs == 0 {
            return Err(ConfigError("key_rotation_secs must be positive".into()));
        }
        Ok(())
    }
}

impl AuthConfig {
    pub fn secret(&self) -> Result<SecretKey, ConfigError> {
        let text = self.secret_key.as_deref().ok_or_else(|| {
            ConfigError(
                "secret_key is required (SPEECH_SECRET_KEY: base64 of 32 random bytes)".into(),
            )
        })?;
        SecretKey::from_base64(text).map_err(|e| ConfigError(format!("secret_key: {e}")))
    }

    /// The public base URL, without a trailing slash.
    pub fn public_url(&self) -> String {
        self.public_auth_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr))
            .trim_end_matches('/')
            .to_string()
    }
}
