//! What the verifier knows about each company's keys, kept so that tokens a caller forges cannot make it
//! fetch or grow without bound:
//!
//! - a company whose JWKS answered 404 is remembered as unknown for a while, and one whose fetch failed for
//!   the refetch interval, so their tokens are refused without asking the token service again;
//! - at most `max_companies` companies are remembered; when full, the oldest company without keys is
//!   forgotten first (forged names cannot push out the keys of real companies), then the oldest with keys;
//! - each company has its own gate, held while its JWKS is fetched: concurrent verifications for that
//!   company wait for one fetch, while the table itself is only locked for map operations, never across
//!   network I/O, so a slow company holds up nobody else.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, DecodingKey};
use parking_lot::Mutex;

use super::jwks::{FetchError, Keys};

/// A verification key and the algorithm it is published for.
pub(super) type Key = (Algorithm, DecodingKey);

/// How long what was learned is trusted, and how much is kept.
#[derive(Debug, Clone, Copy)]
pub(super) struct Policy {
    pub max_companies: usize,
    /// How long fetched keys are used before they are fetched again.
    pub keys_ttl: Duration,
    /// The least time between two fetches for unknown key ids, and how long a failed fetch is remembered.
    pub refetch_interval: Duration,
    /// How long a 404 (no such company) is remembered.
    pub unknown_company_ttl: Duration,
}

/// What the cache can say about a company and key id.
pub(super) enum Lookup {
    Key(Key),
    /// Refused without a fetch: the company is unknown, its key id is unknown and was asked for recently,
    /// or its last fetch failed recently.
    Refused(Refusal),
    /// Nothing usable is known: fetch, holding this company's gate so that concurrent callers wait for
    /// the one fetch instead of making their own.
    Fetch(Arc<tokio::sync::Mutex<()>>),
}

/// Why a token's key is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    UnknownKey,
    Fetch(FetchError),
}

pub(super) struct KeyCache {
    policy: Policy,
    table: Mutex<Table>,
}

struct Table {
    entries: HashMap<String, Entry>,
    /// Every entry by its rank: the first is forgotten first.
    eviction: BTreeMap<Rank, String>,
    next_seq: u64,
}

/// Eviction order: entries without keys before those with keys, older before newer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    has_keys: bool,
    seq: u64,
}

struct Entry {
    /// The last JWKS fetched, and when.
    keys: Option<(Arc<Keys>, Instant)>,
    /// The last fetch's failure, when it failed, and for how long it stands.
    refused: Option<(FetchError, Instant, Duration)>,
    last_attempt: Option<Instant>,
    gate: Arc<tokio::sync::Mutex<()>>,
    rank: Rank,
}

impl KeyCache {
    pub fn new(policy: Policy) -> KeyCache {
        KeyCache {
            policy,
            table: Mutex::new(Table {
                entries: HashMap::new(),
                eviction: BTreeMap::new(),
                next_seq: 0,
            }),
        }
    }

    /// Companies remembered now.
    pub fn len(&self) -> usize {
        self.table.lock().entries.len()
    }

    /// The key `kid` of `company` when known, a refusal when one stands, else the gate to fetch under
    /// (remembering the company from now on, so that concurrent callers find the same gate).
    pub fn lookup(&self, company: &str, kid: &str, now: Instant) -> Lookup {
        let mut table = self.table.lock();
        if let Some(entry) = table.entries.get(company) {
            return entry.answer(kid, now, &self.policy);
        }
        let entry = table.insert(company, self.policy.max_companies);
        Lookup::Fetch(entry.gate.clone())
    }

    /// Records the outcome of a fetch of `company`'s JWKS made at `now`, and answers for `kid` from it.
    pub fn store(
        &self,
        company: &str,
        kid: &str,
        outcome: Result<Keys, FetchError>,
        now: Instant,
    ) -> Result<Key, Refusal> {
        let mut table = self.table.lock();
        let seq = table.next_seq();
        if !table.entries.contains_key(company) {
            // Forgotten while the fetch ran (the table was full): remember it again.
            table.insert(company, self.policy.max_companies);
        }
        let Table {
            entries, eviction, ..
        } = &mut *table;
        let entry = entries.get_mut(company).expect("inserted above");
        entry.last_attempt = Some(now);
        let answer = match outcome {
            Ok(keys) => {
                let found = keys.get(kid).cloned();
                entry.keys = Some((Arc::new(keys), now));
                entry.refused = None;
                found.ok_or(Refusal::UnknownKey)
            }
            Err(error) => {
                let lasting = match error {
                    FetchError::UnknownCompany => {
                        // The company is gone: its old keys must not verify anything any more.
                        entry.keys = None;
                        self.policy.unknown_company_ttl
                    }
                    // Keys still fresh keep verifying while the token service cannot be reached.
                    FetchError::Unavailable => self.policy.refetch_interval,
                };
                entry.refused = Some((error, now, lasting));
                Err(Refusal::Fetch(error))
            }
        };
        eviction.remove(&entry.rank);
        entry.rank = Rank {
            has_keys: entry.keys.is_some(),
            seq,
        };
        eviction.insert(entry.rank, company.to_string());
        answer
    }
}

impl Table {
    fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// A new, empty entry for `company`, forgetting the first-ranked entries to stay within `max`.
    fn insert(&mut self, company: &str, max: usize) -> &mut Entry {
        while self.entries.len() >= max.max(1) {
            let Some((_, evicted)) = self.eviction.pop_first() else {
                break;
            };
            self.entries.remove(&evicted);
        }
        let rank = Rank {
            has_keys: false,
            seq: self.next_seq(),
        };
        self.eviction.insert(rank, company.to_string());
        self.entries.entry(company.to_string()).or_insert(Entry {
            keys: None,
            refused: None,
            last_attempt: None,
            gate: Arc::new(tokio::sync::Mutex::new(())),
            rank,
        })
    }
}

impl Entry {
    fn answer(&self, kid: &str, now: Instant, policy: &Policy) -> Lookup {
        let fresh_keys = self
            .keys
            .as_ref()
            .filter(|(_, fetched)| now.saturating_duration_since(*fetched) < policy.keys_ttl)
            .map(|(keys, _)| keys);
        if let Some(key) = fresh_keys.and_then(|keys| keys.get(kid)) {
            return Lookup::Key(key.clone());
        }
        if let Some((error, since, lasting)) = self.refused {
            if now.saturating_duration_since(since) < lasting {
                return Lookup::Refused(Refusal::Fetch(error));
            }
        }
        let asked_recently = self
            .last_attempt
            .is_some_and(|at| now.saturating_duration_since(at) < policy.refetch_interval);
        if fresh_keys.is_some() && asked_recently {
            return Lookup::Refused(Refusal::UnknownKey);
        }
        Lookup::Fetch(self.gate.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(max_companies: usize) -> Policy {
        Policy {
            max_companies,
            keys_ttl: Duration::from_secs(600),
            refetch_interval: Duration::from_secs(5),
            unknown_company_ttl: Duration::from_secs(60),
        }
    }

    fn key() -> Key {
        (Algorithm::HS256, DecodingKey::from_secret(b"test"))
    }

    fn keys() -> Keys {
        Keys::from([("k1".to_string(), key())])
    }

    fn is_fetch(lookup: Lookup) -> bool {
        matches!(lookup, Lookup::Fetch(_))
    }

    #[test]
    fn a_company_is_fetched_then_answered_from_memory() {
        let cache = KeyCache::new(policy(10));
        let now = Instant::now();
        assert!(is_fetch(cache.lookup("acme", "k1", now)));
        assert!(cache.store("acme", "k1", Ok(keys()), now).is_ok());
        assert!(matches!(cache.lookup("acme", "k1", now), Lookup::Key(_)));
        // An unknown key id is asked for again only after the refetch interval.
        assert!(matches!(
            cache.lookup("acme", "k2", now + Duration::from_secs(1)),
            Lookup::Refused(Refusal::UnknownKey)
        ));
        assert!(is_fetch(cache.lookup(
            "acme",
            "k2",
            now + Duration::from_secs(6)
        )));
        // Keys are fetched again after their time to live.
        assert!(is_fetch(cache.lookup(
            "acme",
            "k1",
            now + Duration::from_secs(601)
        )));
    }

    #[test]
    fn refusals_stand_for_their_time() {
        let cache = KeyCache::new(policy(10));
        let now = Instant::now();
        let unknown = Err(FetchError::UnknownCompany);
        assert_eq!(
            cache.store("ghost", "k1", unknown, now).err(),
            Some(Refusal::Fetch(FetchError::UnknownCompany))
        );
        let later = now + Duration::from_secs(59);
        assert!(matches!(
            cache.lookup("ghost", "k1", later),
            Lookup::Refused(Refusal::Fetch(FetchError::UnknownCompany))
        ));
        assert!(is_fetch(cache.lookup(
            "ghost",
            "k1",
            now + Duration::from_secs(60)
        )));

        let down = Err(FetchError::Unavailable);
        let _ = cache.store("acme", "k1", down, now);
        assert!(matches!(
            cache.lookup("acme", "k1", now + Duration::from_secs(4)),
            Lookup::Refused(Refusal::Fetch(FetchError::Unavailable))
        ));
        assert!(is_fetch(cache.lookup(
            "acme",
            "k1",
            now + Duration::from_secs(5)
        )));
    }

    #[test]
    fn fresh_keys_keep_verifying_while_the_token_service_is_down() {
        let cache = KeyCache::new(policy(10));
        let now = Instant::now();
        let _ = cache.store("acme", "k1", Ok(keys()), now);
        let later = now + Duration::from_secs(10);
        let _ = cache.store("acme", "k2", Err(FetchError::Unavailable), later);
        assert!(matches!(cache.lookup("acme", "k1", later), Lookup::Key(_)));
        assert!(matches!(
            cache.lookup("acme", "k2", later),
            Lookup::Refused(Refusal::Fetch(FetchError::Unavailable))
        ));
    }

    #[test]
    fn the_table_forgets_companies_without_keys_first() {
        let cache = KeyCache::new(policy(3));
        let now = Instant::now();
        let _ = cache.store("acme", "k1", Ok(keys()), now);
        for i in 0..10 {
            let ghost = format!("ghost-{i}");
            assert!(is_fetch(cache.lookup(&ghost, "k1", now)));
            let _ = cache.store(&ghost, "k1", Err(FetchError::UnknownCompany), now);
            assert!(cache.len() <= 3);
        }
        assert!(matches!(cache.lookup("acme", "k1", now), Lookup::Key(_)));
        assert!(matches!(
            cache.lookup("ghost-9", "k1", now),
            Lookup::Refused(_)
        ));
        assert!(matches!(
            cache.lookup("ghost-8", "k1", now),
            Lookup::Refused(_)
        ));
        assert!(is_fetch(cache.lookup("ghost-7", "k1", now)));
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn concurrent_callers_of_one_company_share_its_gate() {
        let cache = KeyCache::new(policy(10));
        let now = Instant::now();
        let (Lookup::Fetch(first), Lookup::Fetch(second), Lookup::Fetch(other)) = (
            cache.lookup("acme", "k1", now),
            cache.lookup("acme", "k1", now),
            cache.lookup("other", "k1", now),
        ) else {
            panic!("nothing is known yet");
        };
        assert!(Arc::ptr_eq(&first, &second));
        assert!(!Arc::ptr_eq(&first, &other));
    }
}
