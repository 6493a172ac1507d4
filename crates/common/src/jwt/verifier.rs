use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use parking_lot::RwLock;

use super::claims::{AccessClaims, ACCESS_TOKEN_TYPE, DEFAULT_AUDIENCE};

#[derive(Debug, Clone)]
pub struct VerifierConfig {
    /// Where this service reaches the token service, e.g. `http://auth:8081`.
    pub auth_url: String,
    /// The token service's public base URL, which issuers are built from; often equal to `auth_url`.
    pub issuer_base: String,
    pub audience: String,
    /// How long a fetched JWKS is used before it is fetched again.
    pub jwks_ttl: Duration,
    /// The least time between two fetches of one company's JWKS caused by unknown key ids.
    pub refetch_interval: Duration,
    /// Verified tokens remembered at most (the cache is emptied when full).
    pub cache_capacity: usize,
    /// Clock skew tolerated on `exp`, in seconds.
    pub leeway: u64,
}

impl VerifierConfig {
    pub fn new(auth_url: &str, issuer_base: &str) -> VerifierConfig {
        VerifierConfig {
            auth_url: auth_url.trim_end_matches('/').to_string(),
            issuer_base: issuer_base.trim_end_matches('/').to_string(),
            audience: DEFAULT_AUDIENCE.to_string(),
            jwks_ttl: Duration::from_secs(600),
            refetch_interval: Duration::from_secs(5),
            cache_capacity: 100_000,
            leeway: 30,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("the token is malformed")]
    Malformed,
    #[error("the token was not issued by this platform's token service")]
    UnknownIssuer,
    #[error("the token is signed with an unknown key")]
    UnknownKey,
    #[error("the token signature or claims are invalid: {0}")]
    Invalid(String),
    #[error("the token has expired")]
    Expired,
    #[error("the token service could not be reached to fetch its keys")]
    KeysUnavailable,
}

struct CompanyKeys {
    keys: HashMap<String, (Algorithm, DecodingKey)>,
    fetched: Instant,
}

/// Verifies access tokens issued by the platform's token service. Cheap to clone.
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: VerifierConfig,
    http: reqwest::Client,
    keys: RwLock<HashMap<String, Arc<CompanyKeys>>>,
    /// Serializes fetches per company and remembers the last attempt.
    fetch_lock: tokio::sync::Mutex<HashMap<String, Instant>>,
    verified: RwLock<HashMap<Box<str>, Arc<AccessClaims>>>,
    /// Signatures checked so far (tokens not found among the verified ones).
    signature_checks: AtomicU64,
}

/// The part of the claims read before the signature is checked, to pick the company's keys.
#[derive(serde::Deserialize)]
struct Unverified {
    iss: String,
    company: String,
}

impl JwtVerifier {
    pub fn new(config: VerifierConfig) -> JwtVerifier {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a reqwest client with a timeout builds");
        JwtVerifier {
            inner: Arc::new(Inner {
                config,
                http,
                keys: RwLock::new(HashMap::new()),
                fetch_lock: tokio::sync::Mutex::new(HashMap::new()),
                verified: RwLock::new(HashMap::new()),
                signature_checks: AtomicU64::new(0),
            }),
        }
    }

    pub fn config(&self) -> &VerifierConfig {
        &self.inner.config
    }

    /// The issuer of a company's tokens.
    pub fn issuer_for(&self, company: &str) -> String {
        format!("{}/oauth/{}", self.inner.config.issuer_base, company)
    }

    /// Verifies `token` and returns its claims.
    pub async fn verify(&self, token: &str) -> Result<Arc<AccessClaims>, VerifyError> {
        let now = chrono::Utc::now().timestamp();
        if let Some(claims) = self.inner.verified.read().get(token) {
            return if claims.exp + self.inner.config.leeway as i64 > now {
                Ok(claims.clone())
            } else {
                Err(VerifyError::Expired)
            };
        }
        let claims = Arc::new(self.verify_signature(token).await?);
        let mut cache = self.inner.verified.write();
        if cache.len() >= self.inner.config.cache_capacity {
            cache.retain(|_, c| c.exp > now);
            if cache.len() >= self.inner.config.cache_capacity {
                cache.clear();
            }
        }
        cache.insert(token.into(), claims.clone());
        Ok(claims)
    }

    /// How many signatures this verifier has checked: a token verified again is not counted.
    pub fn signature_checks(&self) -> u64 {
        self.inner.signature_checks.load(Ordering::Relaxed)
    }

    async fn verify_signature(&self, token: &str) -> Result<AccessClaims, VerifyError> {
        self.inner.signature_checks.fetch_add(1, Ordering::Relaxed);
        let header = decode_header(token).map_err(|_| VerifyError::Malformed)?;
        if header
            .typ
            .as_deref()
            .map(|t| t.eq_ignore_ascii_case(ACCESS_TOKEN_TYPE))
            != Some(true)
        {
            return Err(VerifyError::Invalid("not an access token".into()));
        }
        let kid = header.kid.ok_or(VerifyError::Malformed)?;
        let unverified = peek_claims(token)?;
        if unverified.iss != self.issuer_for(&unverified.company) {
            return Err(VerifyError::UnknownIssuer);
        }
        let (alg, key) = self.key_for(&unverified.company, &kid).await?;
        if alg != header.alg {
            return Err(VerifyError::Invalid(
                "algorithm does not match the key".into(),
            ));
        }
        let mut validation = Validation::new(alg);
        validation.set_audience(&[&self.inner.config.audience]);
        validation.set_issuer(&[&unverified.iss]);
        validation.leeway = self.inner.config.leeway;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        match decode::<AccessClaims>(token, &key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(e) if matches!(e.kind(), jsonwebtoken::errors::ErrorKind::ExpiredSignature) => {
                Err(VerifyError::Expired)
            }
            Err(e) => Err(VerifyError::Invalid(e.to_string())),
        }
    }

    async fn key_for(
        &self,
        company: &str,
        kid: &str,
    ) -> Result<(Algorithm, DecodingKey), VerifyError> {
        let cached = self.inner.keys.read().get(company).cloned();
        if let Some(keys) = &cached {
            if keys.fetched.elapsed() < self.inner.config.jwks_ttl {
                if let Some(k) = keys.keys.get(kid) {
                    return Ok(k.clone());
                }
            }
        }
        let keys = self.refetch(company, cached.is_some()).await?;
        keys.keys.get(kid).cloned().ok_or(VerifyError::UnknownKey)
    }

    /// Fetches the company's JWKS unless another caller just did (then uses theirs).
    async fn refetch(
        &self,
        company: &str,
        had_keys: bool,
    ) -> Result<Arc<CompanyKeys>, VerifyError> {
        let mut attempts = self.inner.fetch_lock.lock().await;
        if let Some(last) = attempts.get(company) {
            if had_keys && last.elapsed() < self.inner.config.refetch_interval {
                if let Some(keys) = self.inner.keys.read().get(company).cloned() {
                    return Ok(keys);
                }
            }
        }
        attempts.insert(company.to_string(), Instant::now());
        let url = format!("{}/oauth/{}/jwks", self.inner.config.auth_url, company);
        let response = self.inner.http.get(&url).send().await.map_err(|e| {
            tracing::warn!(error = %e, %url, "JWKS fetch failed");
            VerifyError::KeysUnavailable
        })?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Err(VerifyError::UnknownIssuer);
        }
        let set: JwkSet = response
            .error_for_status()
            .map_err(|_| VerifyError::KeysUnavailable)?
            .json()
            .await
            .map_err(|_| VerifyError::KeysUnavailable)?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let (Some(kid), Some(alg)) = (jwk.common.key_id.clone(), jwk_algorithm(jwk)) else {
                continue;
            };
            if let Ok(key) = DecodingKey::from_jwk(jwk) {
                keys.insert(kid, (alg, key));
            }
        }
        let keys = Arc::new(CompanyKeys {
            keys,
            fetched: Instant::now(),
        });
        self.inner
            .keys
            .write()
            .insert(company.to_string(), keys.clone());
        Ok(keys)
    }
}

fn jwk_algorithm(jwk: &jsonwebtoken::jwk::Jwk) -> Option<Algorithm> {
    use jsonwebtoken::jwk::KeyAlgorithm;
    match jwk.common.key_algorithm? {
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        _ => None,
    }
}

fn peek_claims(token: &str) -> Result<Unverified, VerifyError> {
    use base64::Engine;
    let payload = token.split('.').nth(1).ok_or(VerifyError::Malformed)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| VerifyError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| VerifyError::Malformed)
}
