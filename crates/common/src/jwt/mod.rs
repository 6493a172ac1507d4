//! Access tokens: their claims, and the verifier the resource services use. The verifier fetches each
//! company's JWKS from the token service, caches it, refetches on an unknown key id (at most once per
//! interval, so forged key ids cannot make it hammer the token service), and checks signature, issuer,
//! audience, expiry and token type. A verified token is remembered until it expires, so a client that
//! sends the same bearer token again costs a hash lookup, not a signature check. Tokens anyone can forge
//! (naming unknown or impossible companies) cost at most one fetch per company and time window, in memory
//! that is bounded; docs/configuration.md lists the limits.

mod claims;
mod company;
mod extract;
mod jwks;
mod key_cache;
mod verifier;

pub use claims::{AccessClaims, ACCESS_TOKEN_TYPE, DEFAULT_AUDIENCE};
pub use company::{valid_company, MAX_COMPANY_LEN};
pub use extract::{bearer_token, Authenticated};
pub use verifier::{JwtVerifier, VerifierConfig, VerifyError, CLOCK_SKEW_SECS};
