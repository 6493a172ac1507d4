//! `KeyRing`: the signing keys of every company, loaded from the store and cached for a short while so
//! signing a token touches no database. Several replicas may run: each reloads within `cache_for`, and a
//! key another replica created is published (and so verifiable) as soon as it is stored.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use parking_lot::RwLock;

use super::generate::{Jwk, Jwks, KeyAlg, NewKey};
use super::seal::Sealer;
use common::db::Database;

use crate::storage::{self, SigningKeyRecord};
use common::db::{now_millis, StoreError};

#[derive(Debug, Clone, Copy)]
pub struct KeyPolicy {
    /// A key signs for this long, then a new one takes over.
    pub rotate_after: Duration,
    /// A retired key stays published this long; at least the longest token lifetime.
    pub overlap: Duration,
    /// How long loaded keys are used before the store is read again.
    pub cache_for: Duration,
}

pub struct SigningKey {
    pub kid: String,
    pub alg: KeyAlg,
    pub encoding: EncodingKey,
    /// The Ed25519 key pair, parsed once: parsing derives the public key, which costs as much as a
    /// signature, so doing it per token would halve the token endpoint's throughput.
    pub ed25519: Option<ring::signature::Ed25519KeyPair>,
}

/// One company's current signing keys and everything published.
pub struct CompanyKeys {
    pub access: SigningKey,
    pub id_token: SigningKey,
    /// The JWKS document, serialized once.
    pub jwks: String,
    verify: HashMap<String, (Algorithm, DecodingKey)>,
    loaded: Instant,
}

impl CompanyKeys {
    /// The decoding key of a published key id.
    pub fn decoding_key(&self, kid: &str) -> Option<&(Algorithm, DecodingKey)> {
        self.verify.get(kid)
    }
}

pub struct KeyRing {
    db: Database,
    sealer: Sealer,
    policy: KeyPolicy,
    cache: RwLock<HashMap<String, Arc<CompanyKeys>>>,
    /// Serializes loads and generation, so a burst of first requests generates one key, not many.
    load_lock: tokio::sync::Mutex<()>,
}

impl KeyRing {
    pub fn new(db: Database, sealer: Sealer, policy: KeyPolicy) -> KeyRing {
        KeyRing {
            db,
            sealer,
            policy,
            cache: RwLock::new(HashMap::new()),
            load_lock: tokio::sync::Mutex::new(()),
        }
    }

    pub fn policy(&self) -> KeyPolicy {
        self.policy
    }

    /// The company's keys, generating the first ones (or successors of expired ones) as needed.
    pub async fn get(&self, company: &str) -> Result<Arc<CompanyKeys>, StoreError> {
        if let Some(keys) = self.cached(company) {
            return Ok(keys);
        }
        let _guard = self.load_lock.lock().await;
        if let Some(keys) = self.cached(company) {
            return Ok(keys);
        }
        self.load(company).await
    }

    fn cached(&self, company: &str) -> Option<Arc<CompanyKeys>> {
        let cache = self.cache.read();
        let keys = cache.get(company)?;
        (keys.loaded.elapsed() < self.policy.cache_for).then(|| keys.clone())
    }

    /// Retires the company's current keys and starts signing with new ones.
    pub async fn rotate(&self, company: &str) -> Result<Arc<CompanyKeys>, StoreError> {
        let _guard = self.load_lock.lock().await;
        storage::retire_signing_keys(&self.db, company, None, now_millis()).await?;
        self.load(company).await
    }

    async fn load(&self, company: &str) -> Result<Arc<CompanyKeys>, StoreError> {
        let now = now_millis();
        let overlap = self.policy.overlap.as_millis() as i64;
        storage::delete_keys_retired_before(&self.db, company, now - overlap).await?;
        let mut records = storage::signing_keys(&self.db, company).await?;
        // Keys are made only for companies that exist: a request naming any company must not cost a key
        // generation.
        if records.is_empty() && directory::get_company(&self.db, company).await?.is_none() {
            return Err(StoreError::NotFound(format!("company {company}")));
        }
        let rotate_after = self.policy.rotate_after.as_millis() as i64;
        for alg in [KeyAlg::EdDsa, KeyAlg::Rs256] {
            let current = newest_active(&records, alg);
            let stale = current.is_some_and(|k| now - k.created_ms >= rotate_after);
            if current.is_none() || stale {
                if stale {
                    storage::retire_signing_keys(&self.db, company, Some(alg.name()), now).await?;
                }
                let record = self.create(company, alg).await?;
                tracing::info!(company, kid = %record.kid, alg = alg.name(), "signing key created");
                records = storage::signing_keys(&self.db, company).await?;
            }
        }
        let keys = Arc::new(self.assemble(&records)?);
        self.cache.write().insert(company.to_string(), keys.clone());
        Ok(keys)
    }

    async fn create(&self, company: &str, alg: KeyAlg) -> Result<SigningKeyRecord, StoreError> {
        // RSA generation takes a noticeable time: keep it off the async workers.
        let key = tokio::task::spawn_blocking(move || NewKey::generate(alg))
            .await
            .map_err(|e| {
                StoreError::Database(sqlx::Error::Protocol(format!("key generation failed: {e}")))
            })?;
        let record = SigningKeyRecord {
            kid: key.kid.clone(),
            company: company.to_string(),
            alg: alg.name().to_string(),
            sealed_private: self.sealer.seal(&key.kid, &key.private_der),
            public_jwk: serde_json::to_string(&key.public_jwk).expect("a JWK serializes"),
            created_ms: now_millis(),
            retired_ms: None,
        };
        storage::insert_signing_key(&self.db, &record).await?;
        Ok(record)
    }

    fn assemble(&self, records: &[SigningKeyRecord]) -> Result<CompanyKeys, StoreError> {
        let signing = |alg: KeyAlg| -> Result<SigningKey, StoreError> {
            let record = newest_active(records, alg)
                .ok_or_else(|| StoreError::NotFound(format!("active {} key", alg.name())))?;
            let der = self
                .sealer
                .open(&record.kid, &record.sealed_private)
                .ok_or_else(|| {
                    StoreError::Database(sqlx::Error::Protocol(format!(
                        "signing key {} cannot be opened: was SPEECH_SECRET_KEY changed?",
                        record.kid
                    )))
                })?;
            let ed25519 = match alg {
                KeyAlg::EdDsa => {
                    ring::signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der).ok()
                }
                KeyAlg::Rs256 => None,
            };
            Ok(SigningKey {
                kid: record.kid.clone(),
                alg,
                encoding: alg.encoding_key(&der),
                ed25519,
            })
        };
        let mut published = Vec::new();
        let mut verify = HashMap::new();
        for record in records {
            let Ok(jwk) = serde_json::from_str::<Jwk>(&record.public_jwk) else {
                continue;
            };
            if let (Ok(public), Some(alg)) = (
                serde_json::from_str::<jsonwebtoken::jwk::Jwk>(&record.public_jwk),
                KeyAlg::parse(&record.alg),
            ) {
                if let Ok(key) = DecodingKey::from_jwk(&public) {
                    verify.insert(record.kid.clone(), (alg.jwt_algorithm(), key));
                }
            }
            published.push(jwk);
        }
        Ok(CompanyKeys {
            access: signing(KeyAlg::EdDsa)?,
            id_token: signing(KeyAlg::Rs256)?,
            jwks: serde_json::to_string(&Jwks { keys: published }).expect("a JWKS serializes"),
            verify,
            loaded: Instant::now(),
        })
    }
}

fn newest_active(records: &[SigningKeyRecord], alg: KeyAlg) -> Option<&SigningKeyRecord> {
    records
        .iter()
        .filter(|r| r.retired_ms.is_none() && r.alg == alg.name())
        .max_by_key(|r| r.created_ms)
}
