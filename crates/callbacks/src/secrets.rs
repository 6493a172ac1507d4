//! A company's callback secrets as they stand (docs/transcription.md, Signatures): the current one, and
//! for `callback_secret_overlap_s` after a rotation the one before it too. Every attempt is signed with
//! both while they overlap (the `webhook-signature` header holds one signature per key, as Standard
//! Webhooks allows), so a receiver keeps verifying while it moves to the new secret. Only the
//! generation and the time of the rotation are stored; the keys are derived again where needed.

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::db::{Handle, StoreError};
use common::secrets::SecretKey;

use crate::sign::CallbackSecret;
use analytics_store::callback_secrets;
use analytics_store::SecretGeneration;

/// The keys a company's posts are signed with now.
#[derive(Debug, Clone)]
pub struct Signing {
    pub current: CallbackSecret,
    /// How many times the company rotated its secret.
    pub generation: i64,
    /// When it last did.
    pub rotated: Option<DateTime<Utc>>,
    /// The secret before the current one, while posts are still signed with it, and until when.
    pub previous: Option<(CallbackSecret, DateTime<Utc>)>,
}

impl Signing {
    fn of(
        server: &SecretKey,
        company: &str,
        stored: Option<SecretGeneration>,
        overlap: Duration,
        now: DateTime<Utc>,
    ) -> Signing {
        let generation = stored.as_ref().map_or(0, |s| s.generation);
        let previous_signs = stored.as_ref().is_some_and(|s| s.previous_signs);
        // A time the service wrote itself; were it ever unreadable, the previous key is dropped rather
        // than kept without end.
        let rotated = stored
            .and_then(|s| DateTime::parse_from_rfc3339(&s.rotated).ok())
            .map(|t| t.with_timezone(&Utc));
        let previous = rotated.and_then(|at| {
            let until = at + chrono::Duration::from_std(overlap).ok()?;
            (previous_signs && generation > 0 && now < until).then(|| {
                let key = CallbackSecret::of_generation(server, company, generation - 1);
                (key, until)
            })
        });
        Signing {
            current: CallbackSecret::of_generation(server, company, generation),
            generation,
            rotated,
            previous,
        }
    }

    /// The `webhook-signature` header of one attempt: the current key's signature, then the previous
    /// key's while it still signs.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut header = self.current.sign(id, timestamp, body);
        if let Some((previous, _)) = &self.previous {
            header.push(' ');
            header.push_str(&previous.sign(id, timestamp, body));
        }
        header
    }

    /// The record the API answers with (`/callbacks/{company}/secret`) and bootstrap prints from.
    pub fn record(&self) -> SecretRecord {
        let time = common::time::rfc3339;
        SecretRecord {
            callback_secret: self.current.to_text(),
            generation: self.generation,
            rotated: self.rotated.map(time),
            previous_signs_until: self.previous.as_ref().map(|(_, until)| time(*until)),
        }
    }
}

/// A company's current callback secret as the API gives it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct SecretRecord {
    /// `whsec_` + base64 of the 32-byte key, for any Standard Webhooks library.
    pub callback_secret: String,
    /// How many times it was rotated (0: never).
    pub generation: i64,
    /// When it was last rotated (UTC, RFC 3339), null when never.
    pub rotated: Option<String>,
    /// Until when posts also carry a signature of the secret before it, null when they do not.
    pub previous_signs_until: Option<String>,
}

/// The company's keys now.
pub async fn signing<'a>(
    h: impl Into<Handle<'a>>,
    server: &SecretKey,
    company: &str,
    overlap: Duration,
) -> Result<Signing, StoreError> {
    let stored = callback_secrets::secret_generation(h, company).await?;
    Ok(Signing::of(server, company, stored, overlap, Utc::now()))
}

/// Replaces the company's secret by the next generation's; the one it replaces goes on signing for
/// `overlap`.
pub async fn rotate<'a>(
    h: impl Into<Handle<'a>>,
    server: &SecretKey,
    company: &str,
    overlap: Duration,
) -> Result<Signing, StoreError> {
    let now = Utc::now();
    let rotated = common::time::rfc3339(now);
    let stored = callback_secrets::rotate_secret(h, company, &rotated).await?;
    Ok(Signing::of(server, company, Some(stored), overlap, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::SubsecRound;

    fn stored(generation: i64, rotated: DateTime<Utc>) -> Option<SecretGeneration> {
        Some(SecretGeneration {
            generation,
            rotated: common::time::rfc3339(rotated),
            previous_signs: true,
        })
    }

    #[test]
    fn the_previous_key_signs_only_within_the_overlap() {
        let server = SecretKey::generate();
        let day = Duration::from_secs(86_400);
        // Stored to the millisecond.
        let at = (Utc::now() - chrono::Duration::hours(1)).trunc_subsecs(3);
        let never = Signing::of(&server, "acme", None, day, Utc::now());
        assert_eq!(never.generation, 0);
        assert!(never.previous.is_none() && never.rotated.is_none());
        assert_eq!(
            never.current.to_text(),
            CallbackSecret::of_company(&server, "acme").to_text()
        );

        let within = Signing::of(&server, "acme", stored(2, at), day, Utc::now());
        let (previous, until) = within.previous.clone().expect("within a day");
        assert_eq!(until, at + chrono::Duration::days(1));
        assert_eq!(
            previous.to_text(),
            CallbackSecret::of_generation(&server, "acme", 1).to_text()
        );
        let header = within.sign("msg_1", 100, b"body");
        assert_eq!(header.split(' ').count(), 2);
        assert!(within.current.verify("msg_1", 100, b"body", &header));
        assert!(previous.verify("msg_1", 100, b"body", &header));
        // Two rotations back no longer verifies.
        let older = CallbackSecret::of_generation(&server, "acme", 0);
        assert!(!older.verify("msg_1", 100, b"body", &header));

        let after = Signing::of(
            &server,
            "acme",
            stored(2, at),
            Duration::from_secs(1800),
            Utc::now(),
        );
        assert!(after.previous.is_none());
        let header = after.sign("msg_1", 100, b"body");
        assert_eq!(header.split(' ').count(), 1);
        assert!(!previous.verify("msg_1", 100, b"body", &header));
        // After a deletion of the company, the generation before never signs.
        let mut retired = stored(3, Utc::now()).unwrap();
        retired.previous_signs = false;
        let deleted = Signing::of(&server, "acme", Some(retired), day, Utc::now());
        assert!(deleted.previous.is_none());
        assert_eq!(deleted.generation, 3);
        let record = after.record();
        assert_eq!(record.generation, 2);
        assert!(record.previous_signs_until.is_none());
        assert!(record.rotated.is_some());
        assert!(record.callback_secret.starts_with("whsec_"));
    }
}
