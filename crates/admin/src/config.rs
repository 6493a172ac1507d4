//! Configuration of the administration service. Every key can be set in the file named by `SPEECH_CONFIG`
//! or as `SPEECH_ADMIN_<KEY>`; the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, `SPEECH_AUTH_URL`,
//! `SPEECH_PUBLIC_AUTH_URL`, ...) apply too.

use std::time::Duration;

use common::config::{require_http_url, require_socket_addr, ConfigError, ServiceConfig};
use common::jwt::VerifierConfig;
use common::secrets::SecretKey;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AdminConfig {
    /// Listen address.
    pub addr: String,
    /// The database holding the directory shared with the token service.
    pub database_url: String,
    pub db_max_connections: u32,
    /// Base64 of at least 32 random bytes; the same key as the token service's, since it keys the hashes
    /// of the client secrets this service issues.
    pub secret_key: Option<String>,
    /// Where this service reaches the token service (its JWKS), e.g. `http://auth:8081`.
    pub auth_url: String,
    /// The token service's public base URL, from which token issuers are built; defaults to `auth_url`.
    pub public_auth_url: Option<String>,
    pub log_format: String,
    /// HTTP worker threads; 0 is one per core.
    pub workers: usize,
    /// Requests per second per calling account; 0 disables the limit.
    pub rate_limit_per_second: u32,
    /// Requests per UTC day per calling account; 0 disables the limit.
    pub rate_limit_per_day: u32,
    /// Accounts the limits do not apply to, as `<company>/<username>` (benchmarks, automation).
    pub rate_limit_exempt: Vec<String>,
    /// How often each replica adds its counted requests to the shared counters and reads the sums.
    pub rate_limit_flush_ms: u64,
    /// A request still running after this long is cut off with `request_timeout` (docs/admin-api.md, Limits).
    pub request_timeout_ms: u64,
    /// How long a replica reuses what it read for a request: token revocations, the calling account with
    /// its permissions, and user records served by GET. Writes through this replica take effect at once;
    /// changes made elsewhere (another replica, the token service) within this time. 0 disables it.
    pub read_cache_ms: u64,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig {
            addr: "127.0.0.1:8082".into(),
            database_url: "sqlite://./data/speech.db".into(),
            db_max_connections: 16,
            secret_key: None,
            auth_url: "http://127.0.0.1:8081".into(),
            public_auth_url: None,
            log_format: "json".into(),
            workers: 0,
            rate_limit_per_second: 70,
            rate_limit_per_day: 10_000,
            rate_limit_exempt: Vec::new(),
            rate_limit_flush_ms: 200,
            request_timeout_ms: 180_000,
            read_cache_ms: 1000,
        }
    }
}

impl ServiceConfig for AdminConfig {
    const ENV_PREFIX: &'static str = "SPEECH_ADMIN_";

    fn validate(&self) -> Result<(), ConfigError> {
        require_socket_addr("addr", &self.addr)?;
        require_http_url("auth_url", &self.auth_url)?;
        if let Some(url) = &self.public_auth_url {
            require_http_url("public_auth_url", url)?;
        }
        self.secret()?;
        if self.rate_limit_flush_ms == 0 || self.rate_limit_flush_ms > 10_000 {
            return Err(ConfigError(format!(
                "rate_limit_flush_ms must be between 1 and 10000, got {}",
                self.rate_limit_flush_ms
            )));
        }
        if self.request_timeout_ms == 0 {
            return Err(ConfigError("request_timeout_ms must be positive".into()));
        }
        for account in &self.rate_limit_exempt {
            match account.split_once('/') {
                Some((company, user)) if !company.is_empty() && !user.is_empty() => {}
                _ => {
                    return Err(ConfigError(format!(
                        "rate_limit_exempt entries are <company>/<username>, got {account:?}"
                    )))
                }
            }
        }
        Ok(())
    }
}

impl AdminConfig {
    pub fn secret(&self) -> Result<SecretKey, ConfigError> {
        let text = self.secret_key.as_deref().ok_or_else(|| {
            ConfigError(
                "secret_key is required (SPEECH_SECRET_KEY: the token service's key, base64 of 32 random bytes)"
                    .into(),
            )
        })?;
        SecretKey::from_base64(text).map_err(|e| ConfigError(format!("secret_key: {e}")))
    }

    /// How access tokens are verified: keys from `auth_url`, issuers from `public_auth_url`.
    pub fn verifier_config(&self) -> VerifierConfig {
        let public = self.public_auth_url.as_deref().unwrap_or(&self.auth_url);
        VerifierConfig::new(&self.auth_url, public)
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }
}
