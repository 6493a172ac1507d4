//! The state every handler of the administration service shares.

use std::sync::Arc;
use std::time::Duration;

use common::db::Database;
use common::directory::{open_directory, DirectoryStore};
use common::jwt::JwtVerifier;
use common::secrets::SecretKey;

use crate::config::AdminConfig;
use crate::rate_limit::RateLimiter;
use crate::storage::{open_admin_store, AdminStore};

pub struct AdminState {
    pub config: AdminConfig,
    pub db: Database,
    /// Keys the hashes of client secrets, exactly as the token service verifies them.
    pub secret: SecretKey,
    pub directory: Arc<dyn DirectoryStore>,
    pub store: Arc<dyn AdminStore>,
    /// One verifier per service: its cache of verified tokens is shared by every worker.
    pub verifier: JwtVerifier,
    pub limiter: Arc<RateLimiter>,
}

impl AdminState {
    pub fn new(
        config: AdminConfig,
        db: Database,
    ) -> Result<AdminState, common::config::ConfigError> {
        let secret = config.secret()?;
        let store = open_admin_store(&db);
        let limiter = Arc::new(RateLimiter::new(
            config.rate_limit_per_second,
            config.rate_limit_per_day,
            &config.rate_limit_exempt,
            store.clone(),
            Duration::from_millis(config.rate_limit_flush_ms),
        ));
        Ok(AdminState {
            verifier: JwtVerifier::new(config.verifier_config()),
            directory: open_directory(&db),
            store,
            limiter,
            secret,
            db,
            config,
        })
    }
}
