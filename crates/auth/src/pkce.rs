//! PKCE (RFC 7636). Only S256: `plain` protects nothing against an attacker who sees the request.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

/// `code_challenge_method`: only S256.
#[derive(Deserialize, PartialEq, ToSchema)]
pub enum CodeChallengeMethod {
    S256,
}

/// Checks the form of a challenge sent to the authorize endpoint; without a method it would be `plain`.
pub fn valid_challenge(
    challenge: &str,
    method: Option<CodeChallengeMethod>,
) -> Result<(), &'static str> {
    if method != Some(CodeChallengeMethod::S256) {
        return Err("code_challenge_method must be S256");
    }
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err("code_challenge must be the base64url SHA-256 of the verifier");
    }
    Ok(())
}

/// The S256 challenge of a verifier, as a client computes it.
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` (43 to 128 unreserved characters) hashes to `challenge`.
pub fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed
        && common::secrets::constant_time_eq(
            challenge_of(verifier).as_bytes(),
            challenge.as_bytes(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_example() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(valid_challenge(challenge, Some(CodeChallengeMethod::S256)).is_ok());
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX",
            challenge
        ));
        assert!(valid_challenge(challenge, crate::form::variant("plain")).is_err());
        assert!(valid_challenge(challenge, None).is_err());
        assert!(valid_challenge("short", Some(CodeChallengeMethod::S256)).is_err());
    }
}
