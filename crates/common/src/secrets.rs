//! Secrets: password hashes (argon2id), keyed hashes of client secrets (HMAC-SHA256 under the server's
//! secret key, so checking a client costs no password hash), random tokens, and constant-time checks.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use subtle::ConstantTimeEq;

/// The server-side key that keys client-secret hashes and seals signing keys at rest. At least 32 bytes.
#[derive(Clone)]
pub struct SecretKey {
    bytes: Vec<u8>,
    /// The keyed hash of client secrets, keyed once: checking a client then costs two SHA-256 blocks.
    client_secret_mac: Hmac<Sha256>,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(***)")
    }
}

impl SecretKey {
    /// Parses the base64 form used in configuration (`SPEECH_SECRET_KEY`).
    pub fn from_base64(text: &str) -> Result<SecretKey, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .or_else(|_| URL_SAFE_NO_PAD.decode(text.trim()))
            .map_err(|_| "the secret key must be base64".to_string())?;
        if bytes.len() < 32 {
            return Err(format!(
                "the secret key must be at least 32 bytes, got {}",
                bytes.len()
            ));
        }
        Ok(SecretKey::new(bytes))
    }

    pub fn generate() -> SecretKey {
        SecretKey::new(random_bytes(32))
    }

    fn new(bytes: Vec<u8>) -> SecretKey {
        let mut key = SecretKey {
            bytes,
            client_secret_mac: Hmac::<Sha256>::new_from_slice(&[]).expect("any key length"),
        };
        key.client_secret_mac =
            Hmac::<Sha256>::new_from_slice(&key.derive("client-secret")).expect("any key length");
        key
    }

    pub fn to_base64(&self) -> String {
        STANDARD.encode(&self.bytes)
    }

    /// A key for one purpose, derived so that the purposes never share key material.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.bytes).expect("hmac accepts any key length");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes
}

/// A random URL-safe token carrying `bytes` bytes of entropy.
pub fn random_token(bytes: usize) -> String {
    URL_SAFE_NO_PAD.encode(random_bytes(bytes))
}

/// A new client secret: 256 bits of entropy.
pub fn generate_client_secret() -> String {
    random_token(32)
}

/// A generated password for bootstrap accounts: 144 bits, URL-safe characters.
pub fn generate_password() -> String {
    random_token(18)
}

/// Keyed hash of a client secret, stored instead of the secret.
pub fn hash_client_secret(key: &SecretKey, secret: &str) -> String {
    let mut mac = key.client_secret_mac.clone();
    mac.update(secret.as_bytes());
    URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// Checks a presented client secret against its stored keyed hash, in constant time.
pub fn verify_client_secret(key: &SecretKey, secret: &str, stored_hash: &str) -> bool {
    constant_time_eq(
        hash_client_secret(key, secret).as_bytes(),
        stored_hash.as_bytes(),
    )
}

/// SHA-256 of a high-entropy token (codes, refresh tokens, sessions): enough to store it safely, since such
/// tokens cannot be guessed.
pub fn hash_token(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// argon2id with the library defaults (19 MiB, 2 passes, 1 lane: the OWASP recommendation).
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::encode_b64(&random_bytes(16)).expect("16 bytes is a valid salt");
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 hashing with default parameters cannot fail")
        .to_string()
}

/// Verifies a password against a stored argon2 hash. With no stored hash (unknown user, password never
/// set) it still spends the time of one verification, so timing does not reveal which usernames exist.
pub fn verify_password(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let (hash, real) = match stored {
        Some(h) => (h, true),
        None => (
            DUMMY
                .get_or_init(|| hash_password("dummy password for timing"))
                .as_str(),
            false,
        ),
    };
    let ok = match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    };
    ok && real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_only_with_the_right_password() {
        let hash = hash_password("correct horse");
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", Some(&hash)));
        assert!(!verify_password("wrong horse", Some(&hash)));
        assert!(!verify_password("correct horse", None));
    }

    #[test]
    fn client_secret_hash_depends_on_key_and_secret() {
        let k1 = SecretKey::generate();
        let k2 = SecretKey::generate();
        let secret = generate_client_secret();
        let h = hash_client_secret(&k1, &secret);
        assert!(verify_client_secret(&k1, &secret, &h));
        assert!(!verify_client_secret(&k2, &secret, &h));
        assert!(!verify_client_secret(&k1, "other", &h));
        assert!(!h.contains(&secret));
    }

    #[test]
    fn secret_key_parsing_rejects_short_keys() {
        assert!(SecretKey::from_base64(&STANDARD.encode([1u8; 16])).is_err());
        assert!(SecretKey::from_base64("not base64 !!").is_err());
        let k = SecretKey::generate();
        assert_eq!(
            SecretKey::from_base64(&k.to_base64()).unwrap().bytes,
            k.bytes
        );
    }
}
