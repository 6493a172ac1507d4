//! Configuration of the token service. Every key can be set in the file named by `SPEECH_CONFIG` or as
//! `SPEECH_AUTH_<KEY>`; the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, ...) apply too. The settings
//! every service has live in `common` (flattened, so their keys are top-level like the rest); the ones
//! here are the token service's own. docs/configuration.md lists them all.

use common::config::{CommonSettings, ConfigError, ServiceConfig};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AuthConfig {
    /// Listen address, database, secret key, logs, workers and `public_auth_url` (defaults to
    /// `http://<addr>`; issuers are `<public_auth_url>/oauth/<company>`).
    #[serde(flatten)]
    pub common: CommonSettings,
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
    /// Take the client address from `X-Forwarded-For` (only behind proxies that set it).
    pub trust_forwarded_for: bool,
    /// How many proxies in front of the service append to `X-Forwarded-For`: the client address is the
    /// entry that many places from the right (entries further left are whatever the client sent).
    pub trusted_proxy_hops: u32,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            common: CommonSettings::with_addr("127.0.0.1:8081"),
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
            trusted_proxy_hops: 1,
        }
    }
}

impl ServiceConfig for AuthConfig {
    const ENV_PREFIX: &'static str = "SPEECH_AUTH_";

    fn common(&self) -> &CommonSettings {
        &self.common
    }

    fn validate(&self) -> Result<(), ConfigError> {
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
    /// The public base URL, without a trailing slash.
    pub fn public_url(&self) -> String {
        self.common
            .public_auth_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.common.addr))
            .trim_end_matches('/')
            .to_string()
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
        let config: AuthConfig = with_config_env(
            &[
                ("SPEECH_AUTH_ADDR", "0.0.0.0:9081"),
                ("SPEECH_AUTH_DB_MAX_CONNECTIONS", "7"),
                ("SPEECH_AUTH_WORKERS", "3"),
                ("DATABASE_URL", "postgres://db.example/speech"),
                ("SPEECH_SECRET_KEY", &key),
                ("SPEECH_LOG_FORMAT", "text"),
                ("SPEECH_PUBLIC_AUTH_URL", "https://auth.example/"),
                ("SPEECH_AUTH_CODE_TTL_SECS", "60"),
            ],
            load::<AuthConfig>,
        )
        .expect("loads");
        assert_eq!(
            config.common,
            CommonSettings {
                addr: "0.0.0.0:9081".into(),
                public_auth_url: Some("https://auth.example/".into()),
                database_url: "postgres://db.example/speech".into(),
                db_max_connections: 7,
                secret_key: Some(key.into()),
                log_format: "text".into(),
                workers: 3,
                max_connections: 10_000,
                reserved_connections: 32,
                body_timeout_secs: 30,
                body_min_rate: 16 * 1024,
            }
        );
        assert_eq!(config.code_ttl_secs, 60);
        assert_eq!(config.public_url(), "https://auth.example");
    }

    #[test]
    fn the_defaults_need_only_a_secret_key() {
        let key = SecretKey::generate().to_base64();
        let config: AuthConfig =
            with_config_env(&[("SPEECH_SECRET_KEY", &key)], load::<AuthConfig>).expect("loads");
        assert_eq!(config.common.addr, "127.0.0.1:8081");
        assert_eq!(config.common.database_url, "sqlite://./data/speech.db");
        assert_eq!(config.public_url(), "http://127.0.0.1:8081");
        assert_eq!(config.code_ttl_secs, 120);
    }

    #[test]
    fn the_config_file_sets_the_shared_settings_as_top_level_keys() {
        let key = SecretKey::generate().to_base64();
        let path = std::env::temp_dir().join(format!("auth-config-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            format!(
                "addr = \"127.0.0.1:9181\"\nworkers = 2\nsecret_key = \"{key}\"\ncode_ttl_secs = 30\n"
            ),
        )
        .unwrap();
        let loaded = with_config_env(
            &[("SPEECH_CONFIG", path.to_str().unwrap())],
            load::<AuthConfig>,
        );
        std::fs::remove_file(&path).unwrap();
        let config = loaded.expect("loads");
        assert_eq!(config.common.addr, "127.0.0.1:9181");
        assert_eq!(config.common.workers, 2);
        assert_eq!(config.code_ttl_secs, 30);
    }

    #[test]
    fn an_invalid_shared_setting_stops_the_load_naming_its_key() {
        let key = SecretKey::generate().to_base64();
        let error = with_config_env(
            &[("SPEECH_AUTH_ADDR", "nowhere"), ("SPEECH_SECRET_KEY", &key)],
            load::<AuthConfig>,
        )
        .unwrap_err();
        assert!(error.to_string().contains("addr"), "{error}");
        let error = with_config_env(&[], load::<AuthConfig>).unwrap_err();
        assert!(error.to_string().contains("SPEECH_SECRET_KEY"), "{error}");
    }

    #[test]
    fn a_wrongly_typed_shared_setting_is_named_too() {
        let key = SecretKey::generate().to_base64();
        for (name, value, key_named) in [
            ("SPEECH_AUTH_WORKERS", "many", "WORKERS"),
            ("SPEECH_AUTH_ADDR", "8081", "ADDR"),
            ("SPEECH_AUTH_CODE_TTL_SECS", "soon", "CODE_TTL_SECS"),
        ] {
            let error = with_config_env(
                &[(name, value), ("SPEECH_SECRET_KEY", &key)],
                load::<AuthConfig>,
            )
            .unwrap_err();
            assert!(error.to_string().contains(key_named), "{error}");
        }
    }
}
