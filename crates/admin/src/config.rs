//! Configuration of the administration service. Every key can be set in the file named by `SPEECH_CONFIG`
//! or as `SPEECH_ADMIN_<KEY>`; the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, `SPEECH_AUTH_URL`,
//! `SPEECH_PUBLIC_AUTH_URL`, ...) apply too. The settings every service has live in `common` (flattened, so
//! their keys are top-level like the rest); the ones here are the administration service's own.
//! docs/admin-api.md and docs/configuration.md list them.

use std::time::Duration;

use common::config::{require_http_url, CommonSettings, ConfigError, ServiceConfig};
use common::jwt::VerifierConfig;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AdminConfig {
    /// Listen address, database (the directory shared with the token service), secret key (the token
    /// service's: it keys the hashes of the client secrets this service issues), logs, workers and
    /// `public_auth_url` (token issuers; defaults to `auth_url`).
    #[serde(flatten)]
    pub common: CommonSettings,
    /// Where this service reaches the token service (its JWKS), e.g. `http://auth:8081`.
    pub auth_url: String,
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
            common: CommonSettings::with_addr("127.0.0.1:8082"),
            auth_url: "http://127.0.0.1:8081".into(),
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

    fn common(&self) -> &CommonSettings {
        &self.common
    }

    fn validate(&self) -> Result<(), ConfigError> {
        require_http_url("auth_url", &self.auth_url)?;
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
    /// How access tokens are verified: keys from `auth_url`, issuers from `public_auth_url`.
    pub fn verifier_config(&self) -> VerifierConfig {
        self.common.verifier_config(&self.auth_url)
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use common::config::load;
    use common::secrets::SecretKey;
    use common::testing::with_config_env;

    use super::*;

    #[test]
    fn the_environment_sets_the_shared_settings_under_their_old_names() {
        let key = SecretKey::generate().to_base64();
        let config = with_config_env(
            &[
                ("SPEECH_ADMIN_ADDR", "0.0.0.0:9082"),
                ("SPEECH_ADMIN_WORKERS", "2"),
                ("DATABASE_URL", "postgres://db.example/speech"),
                ("SPEECH_SECRET_KEY", &key),
                ("SPEECH_LOG_FORMAT", "text"),
                ("SPEECH_AUTH_URL", "http://auth:8081"),
                ("SPEECH_PUBLIC_AUTH_URL", "https://auth.example"),
                ("SPEECH_ADMIN_READ_CACHE_MS", "0"),
                ("SPEECH_ADMIN_MAX_CONNECTIONS", "500"),
            ],
            load::<AdminConfig>,
        )
        .expect("loads");
        assert_eq!(
            config.common,
            CommonSettings {
                addr: "0.0.0.0:9082".into(),
                public_auth_url: Some("https://auth.example".into()),
                database_url: "postgres://db.example/speech".into(),
                db_max_connections: 16,
                secret_key: Some(key.into()),
                log_format: "text".into(),
                workers: 2,
                max_connections: 500,
                reserved_connections: 32,
                body_timeout_secs: 30,
                body_min_rate: 16 * 1024,
            }
        );
        assert_eq!(config.auth_url, "http://auth:8081");
        assert_eq!(config.read_cache_ms, 0);
        let verifier = config.verifier_config();
        assert_eq!(
            (verifier.auth_url.as_str(), verifier.issuer_base.as_str()),
            ("http://auth:8081", "https://auth.example")
        );
    }

    #[test]
    fn the_defaults_listen_on_8082_and_issuers_follow_auth_url() {
        let key = SecretKey::generate().to_base64();
        let config =
            with_config_env(&[("SPEECH_SECRET_KEY", &key)], load::<AdminConfig>).expect("loads");
        assert_eq!(config.common.addr, "127.0.0.1:8082");
        assert_eq!(
            config.verifier_config().issuer_base,
            "http://127.0.0.1:8081"
        );
    }

    #[test]
    fn an_invalid_setting_stops_the_load_naming_its_key() {
        let key = SecretKey::generate().to_base64();
        for (name, value, key_named) in [
            ("SPEECH_ADMIN_ADDR", "nowhere", "addr"),
            ("SPEECH_ADMIN_DB_MAX_CONNECTIONS", "0", "db_max_connections"),
            ("SPEECH_AUTH_URL", "auth:8081", "auth_url"),
            ("SPEECH_ADMIN_WORKERS", "all", "WORKERS"),
        ] {
            let error = with_config_env(
                &[(name, value), ("SPEECH_SECRET_KEY", &key)],
                load::<AdminConfig>,
            )
            .unwrap_err();
            assert!(error.to_string().contains(key_named), "{error}");
        }
    }
}
