//! The state every handler of the token service shares.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::db::{Database, StoreError};
use common::secrets::SecretKey;
use directory::OAuthClient;
use parking_lot::RwLock;

use crate::config::AuthConfig;
use crate::keys::{KeyPolicy, KeyRing, Sealer};
use crate::rate_limit::AttemptLimiter;

pub struct AuthState {
    pub config: AuthConfig,
    pub public_url: String,
    pub secret: SecretKey,
    pub db: Database,
    pub keys: KeyRing,
    pub clients: ClientCache,
    pub login_limiter: AttemptLimiter,
}

impl AuthState {
    pub fn new(config: AuthConfig, db: Database) -> Result<AuthState, common::config::ConfigError> {
        let secret = config.common.secret()?;
        let keys = KeyRing::new(
            db.clone(),
            Sealer::new(&secret),
            KeyPolicy {
                rotate_after: Duration::from_secs(config.key_rotation_secs),
                overlap: Duration::from_secs(config.key_overlap_secs),
                cache_for: Duration::from_secs(config.key_cache_secs),
            },
        );
        Ok(AuthState {
            public_url: config.public_url(),
            clients: ClientCache::new(Duration::from_millis(config.client_cache_ms)),
            login_limiter: AttemptLimiter::new(
                config.login_attempts_per_minute,
                Duration::from_secs(60),
            ),
            keys,
            secret,
            db,
            config,
        })
    }

    /// The issuer of a company's tokens.
    pub fn issuer(&self, company: &str) -> String {
        format!("{}/oauth/{}", self.public_url, company)
    }

    /// The client, read through the cache.
    pub async fn client(
        &self,
        company: &str,
        client_id: &str,
    ) -> Result<Option<Arc<OAuthClient>>, StoreError> {
        if let Some(hit) = self.clients.get(company, client_id) {
            return Ok(hit);
        }
        self.client_fresh(company, client_id).await
    }

    /// The client read from the store, bypassing (and refreshing) the cache.
    pub async fn client_fresh(
        &self,
        company: &str,
        client_id: &str,
    ) -> Result<Option<Arc<OAuthClient>>, StoreError> {
        let client = directory::get_client(&self.db, company, client_id)
            .await?
            .map(Arc::new);
        self.clients.put(company, client_id, client.clone());
        Ok(client)
    }
}

/// A short-lived cache of client records, including misses, so the token endpoint costs no database
/// round trip per request. Bounded: emptied when full.
pub struct ClientCache {
    ttl: Duration,
    #[allow(clippy::type_complexity)]
    entries: RwLock<HashMap<(String, String), (Instant, Option<Arc<OAuthClient>>)>>,
}

const CLIENT_CACHE_CAPACITY: usize = 50_000;

impl ClientCache {
    pub fn new(ttl: Duration) -> ClientCache {
        ClientCache {
            ttl,
            entries: RwLock::new(HashMap::new()),
        }
    }

    #[allow(clippy::type_complexity)]
    fn get(&self, company: &str, client_id: &str) -> Option<Option<Arc<OAuthClient>>> {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.read();
        let (at, client) = entries.get(&(company.to_string(), client_id.to_string()))?;
        (at.elapsed() < self.ttl).then(|| client.clone())
    }

    fn put(&self, company: &str, client_id: &str, client: Option<Arc<OAuthClient>>) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.write();
        if entries.len() >= CLIENT_CACHE_CAPACITY {
            entries.clear();
        }
        entries.insert(
            (company.to_string(), client_id.to_string()),
            (Instant::now(), client),
        );
    }
}
