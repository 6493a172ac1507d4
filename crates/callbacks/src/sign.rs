//! Signatures of callback posts, after the Standard Webhooks convention, so receivers can check that a
//! post comes from the service and was not replayed: `webhook-id` (the same on every attempt of one
//! delivery, for deduplication), `webhook-timestamp` (Unix seconds of the attempt) and
//! `webhook-signature` = `v1,` + base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")). The key is the
//! company's callback secret, written `whsec_` + base64 of 32 bytes. It is derived from the server's
//! secret key, the company's name and how many times the company rotated it (its generation, see
//! `secrets`), so every replica signs alike and nothing secret is stored.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use common::secrets::{constant_time_eq, SecretKey};
use hmac::{Hmac, Mac};
use sha2::Sha256;

const PREFIX: &str = "whsec_";

/// A company's callback signing key.
#[derive(Clone)]
pub struct CallbackSecret {
    key: Vec<u8>,
}

impl std::fmt::Debug for CallbackSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallbackSecret(***)")
    }
}

impl CallbackSecret {
    /// The first key of `company` under the server's secret key (generation 0, before any rotation).
    pub fn of_company(server: &SecretKey, company: &str) -> CallbackSecret {
        CallbackSecret::of_generation(server, company, 0)
    }

    /// The key of `company` after `generation` rotations. Each generation's key is independent of the
    /// others: knowing a retired one tells nothing of the next.
    pub fn of_generation(server: &SecretKey, company: &str, generation: i64) -> CallbackSecret {
        // Generation 0 keeps the derivation of the keys given out before rotation existed. A company's
        // name never holds a '/' (`common::jwt::valid_company`), so no purpose is another company's.
        let purpose = match generation {
            0 => format!("callback-secret/{company}"),
            n => format!("callback-secret/{company}/{n}"),
        };
        CallbackSecret {
            key: server.derive(&purpose).to_vec(),
        }
    }

    /// Reads the `whsec_...` form a receiver is given.
    pub fn parse(text: &str) -> Option<CallbackSecret> {
        let key = STANDARD.decode(text.trim().strip_prefix(PREFIX)?).ok()?;
        (!key.is_empty()).then_some(CallbackSecret { key })
    }

    /// The form given to the company (`speechd bootstrap` prints it as `callback_secret`).
    pub fn to_text(&self) -> String {
        format!("{PREFIX}{}", STANDARD.encode(&self.key))
    }

    fn mac(&self, id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        mac.finalize().into_bytes().to_vec()
    }

    /// The `webhook-signature` header value for one attempt.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        format!("v1,{}", STANDARD.encode(self.mac(id, timestamp, body)))
    }

    /// Whether any of the space-separated signatures of a `webhook-signature` header is ours, compared
    /// in constant time. What receivers do; the tests' receiver does it too.
    pub fn verify(&self, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
        let expected = self.mac(id, timestamp, body);
        header.split(' ').any(|part| {
            part.strip_prefix("v1,")
                .and_then(|b64| STANDARD.decode(b64).ok())
                .is_some_and(|given| constant_time_eq(&given, &expected))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_webhooks_reference_vector() {
        // The example of the Standard Webhooks specification (and its reference libraries).
        let secret = CallbackSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_signature_verifies_only_for_its_id_time_body_and_key() {
        let server = SecretKey::generate();
        let acme = CallbackSecret::of_company(&server, "acme");
        let sig = acme.sign("d1", 100, b"body");
        assert!(acme.verify("d1", 100, b"body", &sig));
        assert!(acme.verify("d1", 100, b"body", &format!("v1,bm9wZQ== {sig}")));
        assert!(!acme.verify("d2", 100, b"body", &sig));
        assert!(!acme.verify("d1", 101, b"body", &sig));
        assert!(!acme.verify("d1", 100, b"bodY", &sig));
        let other = CallbackSecret::of_company(&server, "globex");
        assert!(!other.verify("d1", 100, b"body", &sig));
        // The same company and server key give the same secret on every replica.
        assert_eq!(
            acme.to_text(),
            CallbackSecret::of_company(&server, "acme").to_text()
        );
        assert_eq!(
            CallbackSecret::parse(&acme.to_text()).unwrap().key,
            acme.key
        );
        assert!(format!("{acme:?}").contains("***"));
    }

    #[test]
    fn every_generation_has_its_own_key() {
        let server = SecretKey::generate();
        let zero = CallbackSecret::of_generation(&server, "acme", 0);
        assert_eq!(zero.key, CallbackSecret::of_company(&server, "acme").key);
        let keys: Vec<Vec<u8>> = (0..4)
            .map(|n| CallbackSecret::of_generation(&server, "acme", n).key)
            .collect();
        for (i, a) in keys.iter().enumerate() {
            assert_eq!(a.len(), 32);
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
