//! Sealing the access tokens the session table keeps (ChaCha20-Poly1305, a random nonce each): a copy of
//! the database alone gives no one a user's token. A sealed token is bound to its session's id hash, so
//! it cannot be moved to another session's row.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use common::secrets::random_bytes;

pub struct Sealer {
    cipher: ChaCha20Poly1305,
}

impl Sealer {
    pub fn new(key: &[u8; 32]) -> Sealer {
        Sealer {
            cipher: ChaCha20Poly1305::new(Key::from_slice(key)),
        }
    }

    /// `plain` sealed and bound to `label`, as text: nonce and ciphertext in base64url.
    pub fn seal(&self, label: &str, plain: &str) -> String {
        let nonce = random_bytes(12);
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plain.as_bytes(),
                    aad: label.as_bytes(),
                },
            )
            .expect("sealing a short text cannot fail");
        let mut out = nonce;
        out.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// The text `sealed` holds, when it was sealed with this key and `label`.
    pub fn open(&self, label: &str, sealed: &str) -> Option<String> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < 12 {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(12);
        let plain = self
            .cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: label.as_bytes(),
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_token_opens_only_with_its_key_and_label() {
        let sealer = Sealer::new(&[7; 32]);
        let sealed = sealer.seal("session-a", "eyJ.token");
        assert!(!sealed.contains("eyJ"));
        assert_eq!(
            sealer.open("session-a", &sealed).as_deref(),
            Some("eyJ.token")
        );
        assert_eq!(sealer.open("session-b", &sealed), None);
        assert_eq!(Sealer::new(&[8; 32]).open("session-a", &sealed), None);
        assert_eq!(sealer.open("session-a", "short"), None);
    }
}
