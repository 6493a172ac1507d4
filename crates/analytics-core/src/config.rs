//! Configuration of the analytics service. Every key can be set in the file named by `SPEECH_CONFIG` or as
//! `SPEECH_ANALYTICS_<KEY>`; the shared names (`DATABASE_URL`, `AMQP_URL`, `S3_ENDPOINT`, `S3_BUCKET`,
//! `MEILI_URL`, `MEILI_KEY`, `SPEECH_AUTH_URL`, ...) apply too. The adapters are chosen by these URLs
//! alone: without them the service keeps its objects and its search index under `data_dir` and its bus in
//! its database. docs/configuration.md lists every key.

use std::path::PathBuf;

use common::config::{require_http_url, CommonSettings, Confidential, ConfigError, ServiceConfig};
use common::jwt::VerifierConfig;
use common::objects::S3Options;
use serde::{Deserialize, Serialize};
use speech::AsrEngine;

use crate::topics::{Topic, WorkerTopics};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AnalyticsConfig {
    #[serde(flatten)]
    pub common: CommonSettings,
    /// Where this service reaches the token service (its JWKS), e.g. `http://auth:8081`.
    pub auth_url: String,
    /// Where the embedded adapters keep their files: `objects/` (transcripts and audio) and `search/`.
    pub data_dir: PathBuf,
    /// The largest upload accepted by `POST /transcribe/...`, in bytes.
    pub max_upload_bytes: usize,
    /// Whether this process runs the bus workers (reindexing, deletions) beside the API.
    pub run_workers: bool,
    /// How long a worker may hold a message before another worker gets it again.
    pub job_lease_ms: u64,
    /// How long a replica reuses a token's revocation answer.
    pub revocation_cache_ms: u64,
    /// RabbitMQ (`AMQP_URL`); without it the bus is a queue in the service's database.
    pub amqp_url: Option<Confidential>,
    /// S3 (`S3_ENDPOINT`, `S3_BUCKET`); without them objects are files under `data_dir`.
    pub s3_endpoint: Option<String>,
    pub s3_bucket: Option<String>,
    /// The bucket's region (`S3_REGION`), part of every request's signature.
    pub s3_region: String,
    /// The key that signs requests to S3 (`S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY`).
    pub s3_access_key_id: Option<String>,
    pub s3_secret_access_key: Option<Confidential>,
    /// Virtual-hosted addressing (`<bucket>.<host>`) instead of path-style (`<host>/<bucket>`).
    pub s3_virtual_hosted: bool,
    /// Meilisearch (`MEILI_URL`, `MEILI_KEY`); without it the index is embedded under `data_dir`.
    pub meili_url: Option<String>,
    pub meili_key: Option<Confidential>,
    /// The Meilisearch index that holds the calls.
    pub meili_index: String,
    /// Which bus topics this process's workers take (`SPEECH_ANALYTICS_WORKER_TOPICS`, comma-separated
    /// short names: reindex, metadata, delete, score, rescore, transcribe, callback); empty for all. The
    /// transcription workers run apart from the API this way, scaled on their own.
    pub worker_topics: WorkerTopics,
    /// Callbacks may reach loopback addresses (`SPEECH_CALLBACK_ALLOW_LOOPBACK`; local development).
    pub callback_allow_loopback: bool,
    /// Callbacks may reach private ranges (`SPEECH_CALLBACK_ALLOW_PRIVATE`).
    pub callback_allow_private: bool,
    /// The wait before the second attempt of a callback (`SPEECH_CALLBACK_FIRST_RETRY_MS`); each further
    /// failure doubles it, up to `callback_max_wait_ms`.
    pub callback_first_retry_ms: u64,
    pub callback_max_wait_ms: u64,
    /// How long one attempt may take, connection to last byte of the answer's head.
    pub callback_timeout_ms: u64,
    /// Posts under way at once to one receiver (scheme, host and port) per process
    /// (`SPEECH_ANALYTICS_CALLBACK_POSTS_PER_RECEIVER`): a slow receiver holds no more delivery slots.
    pub callback_posts_per_receiver: usize,
    /// Attempts of a callback when neither the request nor its folder says (`attempts`).
    pub callback_attempts: u32,
    /// How long, in seconds, a company's replaced callback secret goes on signing posts beside the new
    /// one after a rotation (`SPEECH_ANALYTICS_CALLBACK_SECRET_OVERLAP_S`), so receivers can switch.
    pub callback_secret_overlap_s: u64,
    /// The recognizer (`SPEECH_ASR_ENGINE`): `pocketsphinx`, in the process, or `http`, an external
    /// engine at `asr_url` (`SPEECH_ASR_URL`).
    pub asr_engine: AsrEngine,
    pub asr_url: Option<String>,
    /// PocketSphinx's model directory (`SPEECH_ASR_MODEL_DIR`): `en-us/`, `cmudict-en-us.dict` and
    /// `en-us.lm.bin`, as Debian's pocketsphinx-en-us installs them.
    pub asr_model_dir: PathBuf,
    /// Recognitions at once per process (`SPEECH_ASR_WORKERS`); 0 for the number of CPUs.
    pub asr_workers: usize,
    /// The longest recording accepted, in seconds (`SPEECH_MAX_AUDIO_SECONDS`).
    pub max_audio_seconds: f64,
    /// How long `POST /transcribe` without a callback waits for its transcript before answering 504
    /// with the request id (the result can then be read at `/transcribe/<requestid>/result`).
    pub transcribe_wait_ms: u64,
    /// The MB of scanner states the compiled applications of a process keep in all between calls
    /// (`SPEECH_ANALYTICS_SCANNER_MEMORY_MB`); 0 keeps none.
    pub scanner_memory_mb: usize,
    /// Calls matched at once per process, on threads apart from the HTTP workers at the lowest CPU
    /// priority, taken in turn by the companies waiting (`SPEECH_ANALYTICS_MATCH_THREADS`); 0 for the
    /// number of CPUs.
    pub match_threads: usize,
    /// A company's reads of this API under way at once per process
    /// (`SPEECH_ANALYTICS_READS_PER_COMPANY`); its next ones wait their turn (`crate::admission`). 0 is
    /// three quarters of the database connections that reads use (half of `db_max_connections`).
    pub reads_per_company: usize,
    /// A company's reads waiting for a turn at most (`SPEECH_ANALYTICS_READ_QUEUE_PER_COMPANY`); past
    /// them its next read is answered 503 with `Retry-After`.
    pub read_queue_per_company: usize,
    /// The wildcard matching one call may take per application to learn its new words, in steps of one
    /// character against one (`SPEECH_ANALYTICS_SCAN_BUDGET_STEPS`); past it the call is not scored by
    /// that application, and `/appmatches` says so.
    pub scan_budget_steps: u64,
    /// How often, in seconds, the deletion workers remove the objects that no call or transcription
    /// request owns, left by a process that died between writing an upload's object and committing its
    /// row (`SPEECH_ANALYTICS_ORPHAN_SWEEP_S`); 0 never.
    pub orphan_sweep_s: u64,
    /// How old, in seconds, such an object must be to go (`SPEECH_ANALYTICS_ORPHAN_GRACE_S`): longer
    /// than an upload takes from writing its object to committing its row.
    pub orphan_grace_s: u64,
    /// The console's address as browsers reach it (`SPEECH_ANALYTICS_CONSOLE_URL`), without `/console`;
    /// by default this service's own `addr` over HTTP. Its sign-in callback is
    /// `<console_url>/console/<company>/callback` (docs/console.md).
    pub console_url: Option<String>,
    /// Where the console's server side calls this API (`SPEECH_ANALYTICS_CONSOLE_API_URL`); by default
    /// this service's own `addr` over loopback.
    pub console_api_url: Option<String>,
}

/// The longest a replaced callback secret may go on signing: a leaked secret must stop verifying soon.
const MAX_SECRET_OVERLAP_S: u64 = 30 * 86_400;

impl Default for AnalyticsConfig {
    fn default() -> Self {
        AnalyticsConfig {
            common: CommonSettings::with_addr("127.0.0.1:8083"),
            auth_url: "http://127.0.0.1:8081".into(),
            data_dir: PathBuf::from("./data/analytics"),
            max_upload_bytes: 64 * 1024 * 1024,
            run_workers: true,
            job_lease_ms: 300_000,
            revocation_cache_ms: 1000,
            amqp_url: None,
            s3_endpoint: None,
            s3_bucket: None,
            s3_region: "us-east-1".into(),
            s3_access_key_id: None,
            s3_secret_access_key: None,
            s3_virtual_hosted: false,
            meili_url: None,
            meili_key: None,
            meili_index: "speech-calls".into(),
            worker_topics: WorkerTopics::default(),
            callback_allow_loopback: false,
            callback_allow_private: false,
            callback_first_retry_ms: 5000,
            callback_max_wait_ms: 3_600_000,
            callback_timeout_ms: 10_000,
            callback_posts_per_receiver: 2,
            callback_attempts: 100,
            callback_secret_overlap_s: 86_400,
            transcribe_wait_ms: 600_000,
            scanner_memory_mb: crate::apps::cache::DEFAULT_SCANNER_BYTES >> 20,
            match_threads: 0,
            reads_per_company: 0,
            read_queue_per_company: 256,
            scan_budget_steps: scoring::apps::compiled::SCAN_BUDGET,
            asr_engine: AsrEngine::Pocketsphinx,
            asr_url: None,
            asr_model_dir: PathBuf::from("/usr/share/pocketsphinx/model/en-us"),
            asr_workers: 0,
            max_audio_seconds: 1800.0,
            orphan_sweep_s: 3600,
            orphan_grace_s: 3600,
            console_url: None,
            console_api_url: None,
        }
    }
}

impl AnalyticsConfig {
    /// The callback settings of the deliverer.
    pub fn callback_settings(&self) -> callbacks::CallbackSettings {
        callbacks::CallbackSettings {
            allow_loopback: self.callback_allow_loopback,
            allow_private: self.callback_allow_private,
            timeout_ms: self.callback_timeout_ms,
            attempts: self.callback_attempts,
            first_retry_ms: self.callback_first_retry_ms,
            max_wait_ms: self.callback_max_wait_ms,
            secret_overlap_s: self.callback_secret_overlap_s,
            posts_per_receiver: self.callback_posts_per_receiver,
        }
    }

    /// Where the console is and what it talks to.
    pub fn console(&self) -> console::ConsoleSettings {
        let own = format!(
            "http://{}",
            self.common.addr.replace("0.0.0.0", "127.0.0.1")
        );
        console::ConsoleSettings {
            public_url: self.console_url.clone().unwrap_or_else(|| own.clone()),
            api_url: self.console_api_url.clone().unwrap_or(own),
            auth_url: self.auth_url.clone(),
            public_auth_url: self
                .common
                .public_auth_url
                .clone()
                .unwrap_or_else(|| self.auth_url.clone()),
        }
    }
}

impl ServiceConfig for AnalyticsConfig {
    const ENV_PREFIX: &'static str = "SPEECH_ANALYTICS_";

    fn common(&self) -> &CommonSettings {
        &self.common
    }

    fn validate(&self) -> Result<(), ConfigError> {
        require_http_url("auth_url", &self.auth_url)?;
        if let Some(url) = &self.console_url {
            require_http_url("console_url", url)?;
        }
        if let Some(url) = &self.console_api_url {
            require_http_url("console_api_url", url)?;
        }
        if self.max_upload_bytes < 1024 {
            return Err(ConfigError(format!(
                "max_upload_bytes must be at least 1024, got {}",
                self.max_upload_bytes
            )));
        }
        if self.job_lease_ms < 1000 {
            return Err(ConfigError(format!(
                "job_lease_ms must be at least 1000, got {}",
                self.job_lease_ms
            )));
        }
        if self.callback_first_retry_ms == 0
            || self.callback_max_wait_ms < self.callback_first_retry_ms
        {
            return Err(ConfigError(format!(
                "callback_first_retry_ms must be at least 1 and at most callback_max_wait_ms ({}), got {}",
                self.callback_max_wait_ms, self.callback_first_retry_ms
            )));
        }
        if !(1..=1000).contains(&self.callback_attempts) {
            return Err(ConfigError(format!(
                "callback_attempts must be 1 to 1000, got {}",
                self.callback_attempts
            )));
        }
        if self.callback_secret_overlap_s > MAX_SECRET_OVERLAP_S {
            return Err(ConfigError(format!(
                "callback_secret_overlap_s must be at most {MAX_SECRET_OVERLAP_S} (30 days), got {}",
                self.callback_secret_overlap_s
            )));
        }
        if self.callback_timeout_ms < 100 {
            return Err(ConfigError(format!(
                "callback_timeout_ms must be at least 100, got {}",
                self.callback_timeout_ms
            )));
        }
        self.speech().validate()?;
        if let Some(endpoint) = filled(&self.s3_endpoint) {
            require_http_url("s3_endpoint", endpoint)?;
            for (key, value) in [
                ("s3_bucket", filled(&self.s3_bucket)),
                ("s3_access_key_id", filled(&self.s3_access_key_id)),
                (
                    "s3_secret_access_key",
                    filled_secret(&self.s3_secret_access_key),
                ),
            ] {
                if value.is_none() {
                    return Err(ConfigError(format!(
                        "{key} must be set when s3_endpoint is ({})",
                        key.to_uppercase()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// An optional setting that is present and not empty (an empty environment variable means unset).
fn filled(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// [`filled`] for a secret setting.
pub(crate) fn filled_secret(value: &Option<Confidential>) -> Option<&str> {
    value
        .as_ref()
        .map(Confidential::expose)
        .filter(|v| !v.is_empty())
}

impl AnalyticsConfig {
    /// The topics this process's workers take (`worker_topics`, read when the configuration loads).
    pub fn topics(&self) -> &[Topic] {
        self.worker_topics.topics()
    }

    /// The recognizer's settings.
    pub fn speech(&self) -> speech::SpeechConfig {
        speech::SpeechConfig {
            asr_engine: self.asr_engine,
            asr_url: filled(&self.asr_url).map(str::to_string),
            asr_model_dir: self.asr_model_dir.clone(),
            asr_workers: self.recognizers(),
            max_audio_seconds: self.max_audio_seconds,
        }
    }

    /// Recognitions at once: `asr_workers`, or the number of CPUs.
    pub fn recognizers(&self) -> usize {
        if self.asr_workers > 0 {
            self.asr_workers
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// Matches at once: `match_threads`, or the number of CPUs.
    pub fn matchers(&self) -> usize {
        if self.match_threads > 0 {
            self.match_threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// A company's reads at once: `reads_per_company`, or three quarters of the connections single
    /// statements use (half the pool), at least one.
    pub fn reads_per_company(&self) -> usize {
        if self.reads_per_company > 0 {
            self.reads_per_company
        } else {
            (self.common.db_max_connections as usize / 2 * 3 / 4).max(1)
        }
    }

    /// How access tokens are verified: keys from `auth_url`, issuers from `public_auth_url`.
    pub fn verifier_config(&self) -> VerifierConfig {
        self.common.verifier_config(&self.auth_url)
    }

    /// The S3 bucket to keep objects in, when `s3_endpoint` is set (`validate` saw the rest is too).
    pub fn s3_options(&self) -> Option<S3Options> {
        let endpoint = filled(&self.s3_endpoint)?;
        Some(S3Options {
            endpoint: endpoint.to_string(),
            bucket: filled(&self.s3_bucket).unwrap_or_default().to_string(),
            region: self.s3_region.clone(),
            access_key_id: filled(&self.s3_access_key_id)
                .unwrap_or_default()
                .to_string(),
            secret_access_key: filled_secret(&self.s3_secret_access_key)
                .unwrap_or_default()
                .into(),
            virtual_hosted: self.s3_virtual_hosted,
        })
    }
}

#[cfg(test)]
mod tests {
    use common::config::load;
    use common::secrets::SecretKey;
    use common::testing::with_config_env;

    use super::*;

    fn s3_env<'a>(key: &'a str, without: &str) -> Vec<(&'a str, &'a str)> {
        [
            ("SPEECH_SECRET_KEY", key),
            ("S3_ENDPOINT", "http://minio:9000"),
            ("S3_BUCKET", "speech"),
            ("S3_REGION", "eu-west-1"),
            ("S3_ACCESS_KEY_ID", "speech"),
            ("S3_SECRET_ACCESS_KEY", "speech-minio-secret"),
        ]
        .into_iter()
        .filter(|(name, _)| *name != without)
        .collect()
    }

    #[test]
    fn printing_the_configuration_shows_no_secret() {
        let key = SecretKey::generate().to_base64();
        let mut env = s3_env(&key, "");
        env.extend([
            ("MEILI_URL", "http://meili:7700"),
            ("MEILI_KEY", "meili-master-key-123"),
            ("AMQP_URL", "amqp://speech:rabbit-pass-123@rabbit:5672/%2f"),
            (
                "DATABASE_URL",
                "postgres://speech:db-pass-123@db:5432/speech",
            ),
        ]);
        let config = with_config_env(&env, load::<AnalyticsConfig>).expect("loads");
        assert_eq!(
            filled_secret(&config.meili_key),
            Some("meili-master-key-123")
        );
        let options = config.s3_options().expect("S3 is configured");
        for printed in [format!("{config:?}"), format!("{options:?}")] {
            for secret in [
                key.as_str(),
                "speech-minio-secret",
                "meili-master-key-123",
                "rabbit-pass-123",
                "db-pass-123",
            ] {
                assert!(!printed.contains(secret), "{secret} in {printed}");
            }
            assert!(printed.contains("minio:9000"), "{printed}");
        }
    }

    #[test]
    fn the_s3_settings_choose_the_s3_store() {
        let key = SecretKey::generate().to_base64();
        let config = with_config_env(&s3_env(&key, ""), load::<AnalyticsConfig>).expect("loads");
        let options = config.s3_options().expect("S3 is configured");
        assert_eq!(
            (
                options.endpoint.as_str(),
                options.bucket.as_str(),
                options.region.as_str(),
                options.access_key_id.as_str(),
                options.secret_access_key.expose(),
                options.virtual_hosted,
            ),
            (
                "http://minio:9000",
                "speech",
                "eu-west-1",
                "speech",
                "speech-minio-secret",
                false
            )
        );
        let embedded = with_config_env(&[("SPEECH_SECRET_KEY", &key), ("S3_ENDPOINT", "")], || {
            load::<AnalyticsConfig>()
        })
        .expect("loads");
        assert!(
            embedded.s3_options().is_none(),
            "an empty endpoint is unset"
        );
    }

    #[test]
    fn an_s3_endpoint_without_its_bucket_or_key_is_refused_by_name() {
        let key = SecretKey::generate().to_base64();
        for missing in ["S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] {
            let error = with_config_env(&s3_env(&key, missing), load::<AnalyticsConfig>)
                .expect_err(missing);
            assert!(
                error.to_string().contains(&missing.to_lowercase()),
                "{missing}: {error}"
            );
        }
        let mut env = s3_env(&key, "");
        env[1] = ("S3_ENDPOINT", "minio:9000");
        let error = with_config_env(&env, load::<AnalyticsConfig>).expect_err("no scheme");
        assert!(error.to_string().contains("s3_endpoint"), "{error}");
        assert!(
            !error.to_string().contains("speech-minio-secret"),
            "no secret in errors: {error}"
        );
    }

    #[test]
    fn the_recognizer_settings_are_read_from_their_shared_names_and_checked() {
        let key = SecretKey::generate().to_base64();
        let load_with = |extra: &[(&str, &str)]| {
            let mut env = vec![("SPEECH_SECRET_KEY", key.as_str())];
            env.extend_from_slice(extra);
            with_config_env(&env, load::<AnalyticsConfig>)
        };
        let http = load_with(&[
            ("SPEECH_ASR_ENGINE", "http"),
            ("SPEECH_ASR_URL", "http://asr:9000/recognize"),
            ("SPEECH_MAX_AUDIO_SECONDS", "600"),
        ])
        .expect("loads");
        let speech = http.speech();
        assert_eq!(speech.asr_engine, AsrEngine::Http);
        assert_eq!(speech.asr_url.as_deref(), Some("http://asr:9000/recognize"));
        assert_eq!(speech.max_audio_seconds, 600.0);
        for (extra, names) in [
            (&[("SPEECH_ASR_ENGINE", "http")][..], "asr_url"),
            (&[("SPEECH_ASR_ENGINE", "whisper")][..], "asr_engine"),
            (
                &[("SPEECH_MAX_AUDIO_SECONDS", "100000")][..],
                "max_audio_seconds",
            ),
        ] {
            let error = load_with(extra).expect_err(names);
            let text = error.to_string().to_lowercase();
            assert!(text.contains(names), "{names}: {error}");
        }
    }

    /// The worker topics are read into `Topic`s when the configuration loads: short or whole names,
    /// every topic when empty, and an unknown name stops the start naming the setting and the choices.
    #[test]
    fn worker_topics_are_read_once_and_an_unknown_one_stops_the_start() {
        let key = SecretKey::generate().to_base64();
        let load_topics = |topics: &str| {
            with_config_env(
                &[
                    ("SPEECH_SECRET_KEY", key.as_str()),
                    ("SPEECH_ANALYTICS_WORKER_TOPICS", topics),
                ],
                load::<AnalyticsConfig>,
            )
        };
        let some = load_topics("transcribe, analytics.callback").expect("loads");
        assert_eq!(some.topics(), [Topic::Transcribe, Topic::Callback]);
        assert_eq!(load_topics("").expect("loads").topics(), Topic::ALL);
        let error = load_topics("reindex,bogus").expect_err("an unknown topic");
        let text = error.to_string();
        assert!(
            text.contains("worker_topics") && text.contains("bogus") && text.contains("transcribe"),
            "{text}"
        );
    }
}
