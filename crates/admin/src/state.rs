//! The state every handler of the administration service shares.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use common::cache::TtlCache;
use common::db::Database;
use common::jwt::JwtVerifier;
use common::secrets::SecretKey;
use directory::User;

use crate::config::AdminConfig;
use crate::rate_limit::RateLimiter;

pub struct AdminState {
    pub config: AdminConfig,
    /// The database of the directory, the revocation list and the service's own tables.
    pub db: Database,
    /// Keys the hashes of client secrets, exactly as the token service verifies them.
    pub secret: SecretKey,
    /// One verifier per service: its cache of verified tokens is shared by every worker.
    pub verifier: JwtVerifier,
    pub limiter: Arc<RateLimiter>,
    /// Revocation answers per token id (`read_cache_ms`).
    pub revocations: TtlCache<String, bool>,
    /// The calling accounts by (company, user id), with their permissions (`read_cache_ms`).
    pub callers: TtlCache<(String, String), Arc<CallerRecord>>,
    /// User records served by GET, by (company, username) (`read_cache_ms`).
    pub users: TtlCache<(String, String), Arc<User>>,
}

/// A calling account as loaded for permission checks.
pub struct CallerRecord {
    pub user: User,
    pub permissions: HashSet<String>,
}

impl AdminState {
    /// Forgets cached accounts, records and revocation answers after a write through this replica, so
    /// its own changes (a client's or user's tokens revoked among them) show at once.
    pub fn forget_reads(&self) {
        self.callers.clear();
        self.users.clear();
        self.revocations.clear();
    }
}

impl AdminState {
    pub fn new(
        config: AdminConfig,
        db: Database,
    ) -> Result<AdminState, common::config::ConfigError> {
        let secret = config.common.secret()?;
        let limiter = Arc::new(RateLimiter::new(
            config.rate_limit_per_second,
            config.rate_limit_per_day,
            &config.rate_limit_exempt,
            db.clone(),
            Duration::from_millis(config.rate_limit_flush_ms),
        ));
        let ttl = Duration::from_millis(config.read_cache_ms);
        Ok(AdminState {
            revocations: TtlCache::new(ttl, 100_000),
            callers: TtlCache::new(ttl, 10_000),
            users: TtlCache::new(ttl, 10_000),
            verifier: JwtVerifier::new(config.verifier_config()),
            limiter,
            secret,
            db,
            config,
        })
    }
}
