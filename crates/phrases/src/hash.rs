//! The hash of the matcher's maps from words, and those maps. Looking up a turn's words is most of a scan,
//! so both are built for short words: the hash is a few multiplications (SipHash, the standard one, costs
//! more per short word than the rest of a word's work), and a word of up to 15 bytes is kept inline as one
//! number, so a lookup neither follows a pointer nor compares bytes.
//!
//! The hash is seeded from the process's random source (the keys of `std`'s `RandomState`), a new seed
//! per matcher: transcripts and phrases come from outside, and with a fixed seed someone could write words
//! that all fall in the same buckets and make every lookup slow. It is not a cryptographic hash; what it
//! gives is that collisions cannot be predicted without the seed, which is never exposed.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

/// The keys of the hash; every map of one matcher (and of its scanners) shares them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seed([u64; 2]);

impl Seed {
    /// A seed from the process's random source (each `RandomState` has keys of its own).
    pub(crate) fn random() -> Self {
        let state = RandomState::new();
        Seed([state.hash_one(0x5eed_u64), state.hash_one(0xf00d_u64)])
    }
}

impl Default for Seed {
    fn default() -> Self {
        Seed::random()
    }
}

impl BuildHasher for Seed {
    type Hasher = WordHasher;

    fn build_hasher(&self) -> WordHasher {
        WordHasher {
            seed: self.0,
            hash: 0,
        }
    }
}

/// The high and low halves of the 128-bit product, xored: every input bit reaches every output bit.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// A folded-multiply hash (as in foldhash or wyhash), 16 bytes per multiplication.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WordHasher {
    seed: [u64; 2],
    hash: u64,
}

impl WordHasher {
    fn add(&mut self, low: u64, high: u64) {
        self.hash = fold(low ^ self.seed[0], high ^ self.seed[1] ^ self.hash);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            let mut block = [0u8; 16];
            block.copy_from_slice(chunk);
            let block = u128::from_le_bytes(block);
            self.add(block as u64, (block >> 64) as u64);
        }
        let rest = chunks.remainder();
        let mut block = [0u8; 16];
        block[..rest.len()].copy_from_slice(rest);
        // The length in the last byte, which the rest never reaches: "a" and "a\0" differ.
        block[15] = rest.len() as u8;
        let block = u128::from_le_bytes(block);
        self.add(block as u64, (block >> 64) as u64);
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i), 0);
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i), 0);
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i, 0);
    }

    fn write_u128(&mut self, i: u128) {
        self.add(i as u64, (i >> 64) as u64);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64, 0);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

pub(crate) type SeededMap<K, V> = HashMap<K, V, Seed>;

/// The most bytes of a word kept inline.
pub(crate) const INLINE: usize = 15;

/// A word of up to 15 bytes as one number: its bytes (little-endian), then zeros, then its length in the
/// last byte. [`crate::normalize::ascii_token`] makes the same key straight from a token.
pub(crate) fn inline_key(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    if bytes.len() > INLINE {
        return None;
    }
    let mut key = [0u8; 16];
    key[..bytes.len()].copy_from_slice(bytes);
    key[INLINE] = bytes.len() as u8;
    Some(u128::from_le_bytes(key))
}

/// The word of an inline key, handed to `f`.
pub(crate) fn with_inline_word<R>(key: u128, f: impl FnOnce(&str) -> R) -> R {
    let bytes = key.to_le_bytes();
    let length = usize::from(bytes[INLINE]).min(INLINE);
    // Keys are made from words, so this is UTF-8.
    f(std::str::from_utf8(&bytes[..length]).unwrap_or(""))
}

/// An inline key as two halves, so that map entries are aligned on 8 bytes rather than 16 (24 bytes with
/// a small value rather than 32), and hashed in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Inline([u64; 2]);

impl From<u128> for Inline {
    fn from(key: u128) -> Self {
        Inline([key as u64, (key >> 64) as u64])
    }
}

impl Hash for Inline {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u128(u128::from(self.0[0]) | (u128::from(self.0[1]) << 64));
    }
}

/// A map from words: short ones inline (see the module), longer ones boxed.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordMap<V> {
    short: SeededMap<Inline, V>,
    long: SeededMap<Box<str>, V>,
}

impl<V> WordMap<V> {
    pub(crate) fn with_seed(seed: Seed) -> Self {
        WordMap {
            short: HashMap::with_hasher(seed),
            long: HashMap::with_hasher(seed),
        }
    }

    #[inline]
    pub(crate) fn get(&self, word: &str) -> Option<&V> {
        match inline_key(word) {
            Some(key) => self.short.get(&Inline::from(key)),
            None => self.long.get(word),
        }
    }

    /// The value of the word of an inline key (see [`inline_key`]).
    #[inline]
    pub(crate) fn get_inline(&self, key: u128) -> Option<&V> {
        self.short.get(&Inline::from(key))
    }

    pub(crate) fn get_mut(&mut self, word: &str) -> Option<&mut V> {
        match inline_key(word) {
            Some(key) => self.short.get_mut(&Inline::from(key)),
            None => self.long.get_mut(word),
        }
    }

    pub(crate) fn insert(&mut self, word: &str, value: V) {
        match inline_key(word) {
            Some(key) => self.short.insert(Inline::from(key), value),
            None => self.long.insert(word.into(), value),
        };
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// The words, in no particular order.
    #[cfg(test)]
    pub(crate) fn words(&self) -> impl Iterator<Item = (String, &V)> {
        let short = self.short.iter().map(|(key, value)| {
            let key = u128::from(key.0[0]) | (u128::from(key.0[1]) << 64);
            (with_inline_word(key, str::to_string), value)
        });
        short.chain(
            self.long
                .iter()
                .map(|(word, value)| (word.to_string(), value)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_words_are_found_and_kept_apart() {
        let mut map = WordMap::with_seed(Seed::random());
        let long = "incomprehensibilities";
        for (i, word) in [
            "a",
            "refund",
            "straße",
            "fifteen-bytes-x",
            long,
            "",
            "ärger",
        ]
        .iter()
        .enumerate()
        {
            map.insert(word, i);
        }
        assert_eq!(map.len(), 7);
        assert_eq!(map.get("a"), Some(&0));
        assert_eq!(map.get("refund"), Some(&1));
        assert_eq!(map.get("straße"), Some(&2));
        assert_eq!(map.get("fifteen-bytes-x"), Some(&3));
        assert_eq!(map.get(long), Some(&4));
        assert_eq!(map.get(""), Some(&5));
        assert_eq!(map.get("ärger"), Some(&6));
        assert_eq!(map.get("refunds"), None);
        assert_eq!(map.get("a\0"), None);
        assert_eq!(map.get("incomprehensibilitie"), None);
        assert_eq!(map.get_inline(inline_key("straße").unwrap()), Some(&2));
        with_inline_word(inline_key("straße").unwrap(), |w| assert_eq!(w, "straße"));
        *map.get_mut("a").unwrap() = 9;
        assert_eq!(map.get("a"), Some(&9));
        let mut words: Vec<String> = map.words().map(|(w, _)| w).collect();
        words.sort();
        assert_eq!(words[0], "");
        assert_eq!(words[words.len() - 1], "ärger");
        assert!(words.contains(&long.to_string()));
    }

    #[test]
    fn seeds_differ_and_change_the_hash() {
        let (a, b) = (Seed::random(), Seed::random());
        assert_ne!(a, b);
        assert_ne!(a.hash_one("refund"), b.hash_one("refund"));
        // The same seed hashes the same word the same way, and distinct words apart.
        assert_eq!(a.hash_one("refund"), a.hash_one("refund"));
        assert_ne!(a.hash_one("refund"), a.hash_one("refunds"));
        assert_ne!(a.hash_one(""), a.hash_one("\0"));
    }

    #[test]
    fn words_sharing_their_first_bytes_spread_over_the_buckets() {
        // Words differing only in their last byte (a weakness of multiplicative hashes without folding,
        // which keep low bits of the input in the low bits of the hash) land in many of 1,024 buckets.
        let seed = Seed::random();
        let mut buckets = std::collections::HashSet::new();
        for c in b'a'..=b'z' {
            for d in b'a'..=b'z' {
                let word = format!("refundab{}{}", c as char, d as char);
                buckets.insert(seed.hash_one(inline_key(&word).unwrap()) & 1023);
            }
        }
        assert!(buckets.len() > 400, "{} buckets", buckets.len());
    }
}
