//! Per-company signing keys: EdDSA (Ed25519) for access tokens, which must be cheap to sign, and RS256 for
//! ID tokens, which OpenID Connect requires relying parties to support. Keys are generated on first use,
//! rotated when older than the rotation period (or on demand), and a retired key stays published in the
//! JWKS for the overlap window so tokens it signed keep verifying until they expire.

mod generate;
mod ring_cache;
mod seal;

pub use generate::{Jwk, Jwks, KeyAlg, NewKey};
pub use ring_cache::{CompanyKeys, KeyPolicy, KeyRing, SigningKey};
pub use seal::Sealer;
