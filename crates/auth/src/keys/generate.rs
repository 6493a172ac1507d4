//! Key generation and the public JWK of each key.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey};
use ring::signature::KeyPair;
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::traits::PublicKeyParts;
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAlg {
    /// Ed25519: access tokens.
    EdDsa,
    /// RSA 2048 with SHA-256: ID tokens.
    Rs256,
}

impl KeyAlg {
    pub fn name(self) -> &'static str {
        match self {
            KeyAlg::EdDsa => "EdDSA",
            KeyAlg::Rs256 => "RS256",
        }
    }

    pub fn parse(name: &str) -> Option<KeyAlg> {
        match name {
            "EdDSA" => Some(KeyAlg::EdDsa),
            "RS256" => Some(KeyAlg::Rs256),
            _ => None,
        }
    }

    pub fn jwt_algorithm(self) -> Algorithm {
        match self {
            KeyAlg::EdDsa => Algorithm::EdDSA,
            KeyAlg::Rs256 => Algorithm::RS256,
        }
    }

    /// The encoding key from the stored private DER (PKCS#8 for Ed25519, PKCS#1 for RSA).
    pub fn encoding_key(self, der: &[u8]) -> EncodingKey {
        match self {
            KeyAlg::EdDsa => EncodingKey::from_ed_der(der),
            KeyAlg::Rs256 => EncodingKey::from_rsa_der(der),
        }
    }
}

/// A freshly generated key: its id, private DER and public JWK.
pub struct NewKey {
    pub kid: String,
    pub alg: KeyAlg,
    pub private_der: Vec<u8>,
    pub public_jwk: serde_json::Value,
}

impl NewKey {
    pub fn generate(alg: KeyAlg) -> NewKey {
        let kid = format!(
            "{}-{}",
            alg.name().to_ascii_lowercase(),
            uuid::Uuid::now_v7().simple()
        );
        match alg {
            KeyAlg::EdDsa => {
                let rng = ring::rand::SystemRandom::new();
                let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng)
                    .expect("system randomness");
                let pair = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
                    .expect("valid fresh key");
                let x = URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
                NewKey {
                    public_jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"}),
                    kid,
                    alg,
                    private_der: pkcs8.as_ref().to_vec(),
                }
            }
            KeyAlg::Rs256 => {
                let private = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), 2048)
                    .expect("RSA key generation");
                let der = private
                    .to_pkcs1_der()
                    .expect("PKCS#1 encoding")
                    .as_bytes()
                    .to_vec();
                let n = URL_SAFE_NO_PAD.encode(private.n().to_bytes_be());
                let e = URL_SAFE_NO_PAD.encode(private.e().to_bytes_be());
                NewKey {
                    public_jwk: json!({"kty": "RSA", "n": n, "e": e, "kid": kid, "alg": "RS256", "use": "sig"}),
                    kid,
                    alg,
                    private_der: der,
                }
            }
        }
    }
}
