//! The verifier resource services run on every request: it checks an access token's signature against
//! the keys its company publishes, and its issuer, audience, expiry and type. What it learns (keys,
//! unknown companies, verified tokens) is cached within bounds; see `key_cache` for why each bound exists.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use parking_lot::RwLock;

use super::claims::{AccessClaims, ACCESS_TOKEN_TYPE, DEFAULT_AUDIENCE};
use super::company::valid_company;
use super::jwks::{self, FetchError};
use super::key_cache::{KeyCache, Lookup, Policy, Refusal};

#[derive(Debug, Clone)]
pub struct VerifierConfig {
    /// Where this service reaches the token service, e.g. `http://auth:8081`.
    pub auth_url: String,
    /// The token service's public base URL, which issuers are built from; often equal to `auth_url`.
    pub issuer_base: String,
    pub audience: String,
    /// How long a fetched JWKS is used before it is fetched again.
    pub jwks_ttl: Duration,
    /// The least time between two fetches of one company's JWKS caused by unknown key ids; also how long
    /// a failed fetch is remembered (its company's tokens are refused meanwhile, unless their keys are
    /// already known).
    pub refetch_interval: Duration,
    /// How long a company the token service does not know (its JWKS answered 404) is remembered as
    /// unknown: its tokens are refused without asking again. A company created meanwhile is accepted
    /// after this time.
    pub unknown_company_ttl: Duration,
    /// Companies whose keys or refusal are remembered at most; beyond, the oldest without keys is
    /// forgotten first.
    pub max_companies: usize,
    /// Verified tokens remembered at most (the cache is emptied when full).
    pub cache_capacity: usize,
    /// Clock skew tolerated on `exp`, in seconds ([`CLOCK_SKEW_SECS`] by default).
    pub leeway: u64,
}

/// The clock skew a service tolerates on a token's `exp`: the services run beside the token service, on
/// clocks kept in step, so a few seconds; a token is not taken long after its expiry. The token service
/// itself, whose clock set `exp`, tolerates none (docs/decisions.md).
pub const CLOCK_SKEW_SECS: u64 = 5;

impl VerifierConfig {
    pub fn new(auth_url: &str, issuer_base: &str) -> VerifierConfig {
        VerifierConfig {
            auth_url: auth_url.trim_end_matches('/').to_string(),
            issuer_base: issuer_base.trim_end_matches('/').to_string(),
            audience: DEFAULT_AUDIENCE.to_string(),
            jwks_ttl: Duration::from_secs(600),
            refetch_interval: Duration::from_secs(5),
            unknown_company_ttl: Duration::from_secs(60),
            max_companies: 10_000,
            cache_capacity: 100_000,
            leeway: CLOCK_SKEW_SECS,
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

impl From<Refusal> for VerifyError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::UnknownKey => VerifyError::UnknownKey,
            Refusal::Fetch(FetchError::UnknownCompany) => VerifyError::UnknownIssuer,
            Refusal::Fetch(FetchError::Unavailable) => VerifyError::KeysUnavailable,
        }
    }
}

/// Verifies access tokens issued by the platform's token service. Cheap to clone.
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    config: VerifierConfig,
    http: reqwest::Client,
    keys: KeyCache,
    verified: RwLock<HashMap<Box<str>, Arc<AccessClaims>>>,
    /// Signatures checked so far (tokens not found among the verified ones).
    signature_checks: AtomicU64,
    /// JWKS requests sent so far.
    jwks_fetches: AtomicU64,
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
        let keys = KeyCache::new(Policy {
            max_companies: config.max_companies,
            keys_ttl: config.jwks_ttl,
            refetch_interval: config.refetch_interval,
            unknown_company_ttl: config.unknown_company_ttl,
        });
        JwtVerifier {
            inner: Arc::new(Inner {
                config,
                http,
                keys,
                verified: RwLock::new(HashMap::new()),
                signature_checks: AtomicU64::new(0),
                jwks_fetches: AtomicU64::new(0),
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

    /// How many JWKS requests this verifier has sent to the token service.
    pub fn jwks_fetches(&self) -> u64 {
        self.inner.jwks_fetches.load(Ordering::Relaxed)
    }

    /// How many companies the verifier remembers keys or a refusal for; at most `max_companies`.
    pub fn cached_companies(&self) -> usize {
        self.inner.keys.len()
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
        // Both checked before anything is fetched: the company becomes part of the JWKS URL, and a token
        // of another issuer has no business making this verifier call the token service.
        if !valid_company(&unverified.company)
            || unverified.iss != self.issuer_for(&unverified.company)
        {
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

    /// The company's key `kid`: from the cache, or after the one fetch of its JWKS in flight.
    async fn key_for(
        &self,
        company: &str,
        kid: &str,
    ) -> Result<(Algorithm, DecodingKey), VerifyError> {
        let cache = &self.inner.keys;
        let gate = match cache.lookup(company, kid, Instant::now()) {
            Lookup::Key(key) => return Ok(key),
            Lookup::Refused(refusal) => return Err(refusal.into()),
            Lookup::Fetch(gate) => gate,
        };
        let _flight = gate.lock().await;
        // Whoever held the gate before us may have fetched what we need.
        match cache.lookup(company, kid, Instant::now()) {
            Lookup::Key(key) => return Ok(key),
            Lookup::Refused(refusal) => return Err(refusal.into()),
            Lookup::Fetch(_) => {}
        }
        self.inner.jwks_fetches.fetch_add(1, Ordering::Relaxed);
        let outcome = jwks::fetch(&self.inner.http, &self.inner.config.auth_url, company).await;
        Ok(cache.store(company, kid, outcome, Instant::now())?)
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
