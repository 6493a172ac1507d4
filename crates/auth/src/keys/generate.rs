//! Key generation and the public JWK of each key, as stored and as published in the JWKS.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey};
use ring::signature::KeyPair;
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::traits::PublicKeyParts;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A JSON Web Key Set.
#[derive(Serialize, ToSchema)]
pub struct Jwks {
    pub(super) keys: Vec<Jwk>,
}

/// A published public key: Ed25519 (`OKP`, EdDSA) for access tokens, RSA (RS256) for ID tokens.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct Jwk {
    alg: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    crv: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    e: Option<String>,
    kid: String,
    kty: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<String>,
    #[serde(rename = "use")]
    key_use: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    x: Option<String>,
}

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

impl Jwk {
    /// A signing key's JWK without its key material.
    fn signing(kid: &str, kty: &str, alg: KeyAlg) -> Jwk {
        Jwk {
            alg: alg.name().into(),
            crv: None,
            e: None,
            kid: kid.into(),
            kty: kty.into(),
            n: None,
            key_use: "sig".into(),
            x: None,
        }
    }
}

/// A freshly generated key: its id, private DER and public JWK.
pub struct NewKey {
    pub kid: String,
    pub alg: KeyAlg,
    pub private_der: Vec<u8>,
    pub public_jwk: Jwk,
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
                    public_jwk: Jwk {
                        crv: Some("Ed25519".into()),
                        x: Some(x),
                        ..Jwk::signing(&kid, "OKP", alg)
                    },
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
                    public_jwk: Jwk {
                        n: Some(n),
                        e: Some(e),
                        ..Jwk::signing(&kid, "RSA", alg)
                    },
                    kid,
                    alg,
                    private_der: der,
                }
            }
        }
    }
}
