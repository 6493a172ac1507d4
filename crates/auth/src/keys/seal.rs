//! Private signing keys are stored sealed (ChaCha20-Poly1305 under a key derived from the server's secret
//! key), so a copy of the database alone does not let anyone mint tokens.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use common::secrets::{random_bytes, SecretKey};

#[derive(Clone)]
pub struct Sealer {
    cipher: ChaCha20Poly1305,
}

impl Sealer {
    pub fn new(secret: &SecretKey) -> Sealer {
        let key = secret.derive("signing-key-seal");
        Sealer {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&key)),
        }
    }

    /// Seals `plain`, bound to `label` (the key id): nonce followed by ciphertext.
    pub fn seal(&self, label: &str, plain: &[u8]) -> Vec<u8> {
        let nonce = random_bytes(12);
        let mut out = nonce.clone();
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plain,
                    aad: label.as_bytes(),
                },
            )
            .expect("encryption of a small buffer cannot fail");
        out.extend_from_slice(&sealed);
        out
    }

    pub fn open(&self, label: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 {
            return None;
        }
        let (nonce, body) = sealed.split_at(12);
        self.cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: label.as_bytes(),
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_keys_open_only_with_the_same_secret_and_label() {
        let secret = SecretKey::generate();
        let sealer = Sealer::new(&secret);
        let sealed = sealer.seal("kid-1", b"private key bytes");
        assert_eq!(sealer.open("kid-1", &sealed).unwrap(), b"private key bytes");
        assert!(sealer.open("kid-2", &sealed).is_none());
        assert!(Sealer::new(&SecretKey::generate())
            .open("kid-1", &sealed)
            .is_none());
    }
}
