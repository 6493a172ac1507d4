//! Layered configuration: compiled defaults, then an optional TOML file named by `SPEECH_CONFIG`, then
//! environment variables with the service's prefix (`SPEECH_AUTH_ADDR` sets `addr` of the auth service),
//! then the shared unprefixed names of the operator contract (`DATABASE_URL`, `AMQP_URL`, ...).
//! Every service validates what it loaded before it binds a port, so a bad setting stops the boot with a
//! message that names the key. The settings every service has are one struct, `CommonSettings`, that each
//! service flattens into its own; docs/configuration.md lists every key.

mod checks;
mod confidential;
pub(crate) mod settings;

pub use checks::{require_http_url, require_socket_addr, ConfigError};
pub use confidential::Confidential;
pub use settings::CommonSettings;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Environment names that are not prefixed, shared by all services (the operator contract of
/// docs/configuration.md), mapped to the configuration key they set.
pub(crate) const SHARED_ENV: &[(&str, &str)] = &[
    ("DATABASE_URL", "database_url"),
    ("AMQP_URL", "amqp_url"),
    ("S3_ENDPOINT", "s3_endpoint"),
    ("S3_BUCKET", "s3_bucket"),
    ("S3_REGION", "s3_region"),
    ("S3_ACCESS_KEY_ID", "s3_access_key_id"),
    ("S3_SECRET_ACCESS_KEY", "s3_secret_access_key"),
    ("MEILI_URL", "meili_url"),
    ("MEILI_KEY", "meili_key"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "otlp_endpoint"),
    ("SPEECH_SECRET_KEY", "secret_key"),
    ("SPEECH_LOG_FORMAT", "log_format"),
    ("SPEECH_AUTH_URL", "auth_url"),
    ("SPEECH_PUBLIC_AUTH_URL", "public_auth_url"),
    ("SPEECH_CALLBACK_ALLOW_LOOPBACK", "callback_allow_loopback"),
    ("SPEECH_CALLBACK_ALLOW_PRIVATE", "callback_allow_private"),
    ("SPEECH_CALLBACK_FIRST_RETRY_MS", "callback_first_retry_ms"),
    ("SPEECH_ASR_ENGINE", "asr_engine"),
    ("SPEECH_ASR_URL", "asr_url"),
    ("SPEECH_ASR_MODEL_DIR", "asr_model_dir"),
    ("SPEECH_ASR_WORKERS", "asr_workers"),
    ("SPEECH_MAX_AUDIO_SECONDS", "max_audio_seconds"),
];

/// A service configuration: deserializable, with compiled defaults, able to check itself. It flattens
/// `CommonSettings` (`#[serde(flatten)]`), which `load` checks before the service's own keys.
pub trait ServiceConfig: Serialize + DeserializeOwned + Default {
    /// Prefix of this service's own environment variables, e.g. `SPEECH_AUTH_`.
    const ENV_PREFIX: &'static str;

    /// The settings every service has.
    fn common(&self) -> &CommonSettings;

    /// Checks the service's own keys (the shared ones are `CommonSettings::validate`'s); the message
    /// names the offending key.
    fn validate(&self) -> Result<(), ConfigError>;
}

/// Loads `T` from defaults, the file named by `SPEECH_CONFIG` (if any) and the environment, then validates.
pub fn load<T: ServiceConfig>() -> Result<T, ConfigError> {
    load_with(&[])
}

/// Loads `T` as `load` does, with `chosen` (configuration keys, `database_url`, and their values) over
/// every other source: how a process running several services gives them the values it chose for all
/// of them (having read the environment itself), without changing its environment.
pub fn load_with<T: ServiceConfig>(chosen: &[(&str, &str)]) -> Result<T, ConfigError> {
    let mut figment = Figment::from(Serialized::defaults(T::default()));
    if let Ok(path) = std::env::var("SPEECH_CONFIG") {
        if !std::path::Path::new(&path).exists() {
            return Err(ConfigError(format!(
                "SPEECH_CONFIG names {path}, which does not exist"
            )));
        }
        figment = figment.merge(Toml::file(path));
    }
    let chosen: std::collections::BTreeMap<&str, &str> = chosen.iter().copied().collect();
    let figment = figment
        .merge(Env::prefixed(T::ENV_PREFIX))
        .merge(shared_env())
        .merge(Serialized::defaults(chosen));
    // The shared settings are read on their own first only for the error: through the service's
    // flattened struct, serde reports a wrongly typed value (`SPEECH_AUTH_WORKERS=many`) without its key.
    figment.extract::<CommonSettings>()?;
    let config: T = figment.extract()?;
    config.common().validate()?;
    config.validate()?;
    Ok(config)
}

fn shared_env() -> Env {
    Env::raw()
        .filter(|key| {
            SHARED_ENV
                .iter()
                .any(|(name, _)| key.as_str().eq_ignore_ascii_case(name))
        })
        .map(|key| {
            let key = key.as_str();
            let target = SHARED_ENV
                .iter()
                .find(|(name, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, target)| *target)
                .unwrap_or(key);
            target.to_string().into()
        })
}
