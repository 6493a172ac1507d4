//! The hash of the matcher's maps from words, and those maps. Looking up a turn's words is most of a scan,
//! so both are built for short words: the hash is a few multiplications (SipHash, the standard one, costs
//! more per short word than the rest of a word's work), and a word of up to 15 bytes is kept inline as one
//! number in a table of its own (open addressing, linear probing, at most half full), so a lookup neither
//! follows a pointer nor compares bytes, and usually reads one cache line: transcripts have tens of
//! thousands of distinct words, so the table is larger than the core's cache and each line read is a
//! wait.
//!
//! The hash is seeded from the process's random source (the keys of `std`'s `RandomState`), a new seed
//! per matcher: transcripts and phrases come from outside, and with a fixed seed someone could write words
//! that all fall in the same buckets and make every lookup slow. It is not a cryptographic hash; what it
//! gives is that collisions cannot be predicted without the seed, which is never exposed.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};

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

/// An odd constant (the golden ratio's fraction) for the last fold.
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The last step of every hash: folded once more with a constant. One fold leaves the low bits, which
/// pick a bucket, too little of the inputs' high half for some seeds: words that differed only in their
/// last bytes crowded a few hundred of 1,024 buckets with about one seed in forty.
#[inline]
fn finish(hash: u64) -> u64 {
    fold(hash, MIX)
}

impl Seed {
    /// The hash of an inline word's key (`halves` of `inline_key`), as `hash_one` of the key gives it.
    #[inline]
    pub(crate) fn hash_key(&self, key: [u64; 2]) -> u64 {
        finish(fold(key[0] ^ self.0[0], key[1] ^ self.0[1]))
    }
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
        finish(self.hash)
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

/// The halves of an inline key; [0, 0] is the key of the empty word.
fn halves(key: u128) -> [u64; 2] {
    [key as u64, (key >> 64) as u64]
}

/// The words of up to 15 bytes, by their inline key: open addressing with linear probing, keys in the
/// entries, at most half full. Key [0, 0] marks a free entry; the empty word, whose key it is, is kept
/// aside.
#[derive(Debug, Clone)]
struct InlineTable<V> {
    seed: Seed,
    entries: Vec<([u64; 2], V)>,
    len: usize,
    empty: Option<V>,
}

impl<V: Default> InlineTable<V> {
    fn new(seed: Seed) -> Self {
        InlineTable {
            seed,
            entries: Vec::new(),
            len: 0,
            empty: None,
        }
    }

    /// The entry holding `key`, or the free entry where it would go. The table has a free entry.
    #[inline]
    fn find(&self, key: [u64; 2]) -> Result<usize, usize> {
        self.find_hashed(key, self.seed.hash_key(key))
    }

    /// [`Self::find`] with the key's hash given.
    #[inline]
    fn find_hashed(&self, key: [u64; 2], hash: u64) -> Result<usize, usize> {
        let mask = self.entries.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let entry = &self.entries[i].0;
            if *entry == key {
                return Ok(i);
            }
            if *entry == [0, 0] {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Asks for the first entry where `key` is or would be; its hash, for [`Self::get_hashed`].
    #[inline]
    fn prefetch(&self, key: u128) -> u64 {
        let hash = self.seed.hash_key(halves(key));
        let mask = self.entries.len().wrapping_sub(1);
        // Nothing to ask for in an empty table: the address is never read.
        prefetch::prefetch(self.entries.as_ptr().wrapping_add(hash as usize & mask));
        hash
    }

    /// [`Self::get`] of a key other than the empty word's, with its hash given.
    #[inline]
    fn get_hashed(&self, key: u128, hash: u64) -> Option<&V> {
        if self.entries.is_empty() {
            return None;
        }
        self.find_hashed(halves(key), hash)
            .ok()
            .map(|i| &self.entries[i].1)
    }

    #[inline]
    fn get(&self, key: u128) -> Option<&V> {
        let key = halves(key);
        if key == [0, 0] {
            return self.empty.as_ref();
        }
        if self.entries.is_empty() {
            return None;
        }
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    fn get_mut(&mut self, key: u128) -> Option<&mut V> {
        let key = halves(key);
        if key == [0, 0] {
            return self.empty.as_mut();
        }
        if self.entries.is_empty() {
            return None;
        }
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    fn insert(&mut self, key: u128, value: V) {
        let key = halves(key);
        if key == [0, 0] {
            self.empty = Some(value);
            return;
        }
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow();
        }
        match self.find(key) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => {
                self.entries[i] = (key, value);
                self.len += 1;
            }
        }
    }

    fn grow(&mut self) {
        let capacity = (self.entries.len() * 2).max(16);
        let free = (0..capacity).map(|_| ([0, 0], V::default())).collect();
        for (key, value) in std::mem::replace(&mut self.entries, free) {
            if key != [0, 0] {
                if let Err(i) = self.find(key) {
                    self.entries[i] = (key, value);
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.len + usize::from(self.empty.is_some())
    }

    fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<([u64; 2], V)>()
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (u128, &V)> {
        let full = self.entries.iter().filter(|(key, _)| *key != [0, 0]);
        let full =
            full.map(|(key, value)| (u128::from(key[0]) | (u128::from(key[1]) << 64), value));
        self.empty.iter().map(|value| (0, value)).chain(full)
    }
}

/// A map from words: short ones inline (see the module), longer ones boxed.
#[derive(Debug, Clone)]
pub(crate) struct WordMap<V> {
    short: InlineTable<V>,
    long: SeededMap<Box<str>, V>,
}

impl<V: Default> Default for WordMap<V> {
    fn default() -> Self {
        WordMap::with_seed(Seed::random())
    }
}

impl<V: Default> WordMap<V> {
    pub(crate) fn with_seed(seed: Seed) -> Self {
        WordMap {
            short: InlineTable::new(seed),
            long: HashMap::with_hasher(seed),
        }
    }

    #[inline]
    pub(crate) fn get(&self, word: &str) -> Option<&V> {
        match inline_key(word) {
            Some(key) => self.short.get(key),
            None => self.long.get(word),
        }
    }

    /// Asks for where the word of an inline key is or would be; the key's hash, for
    /// [`Self::get_inline_hashed`].
    #[inline]
    pub(crate) fn prefetch(&self, key: u128) -> u64 {
        self.short.prefetch(key)
    }

    /// [`Self::get_inline`] with the hash [`Self::prefetch`] gave, for a word that is not empty.
    #[inline]
    pub(crate) fn get_inline_hashed(&self, key: u128, hash: u64) -> Option<&V> {
        self.short.get_hashed(key, hash)
    }

    pub(crate) fn get_mut(&mut self, word: &str) -> Option<&mut V> {
        match inline_key(word) {
            Some(key) => self.short.get_mut(key),
            None => self.long.get_mut(word),
        }
    }

    pub(crate) fn insert(&mut self, word: &str, value: V) {
        match inline_key(word) {
            Some(key) => self.short.insert(key, value),
            None => {
                self.long.insert(word.into(), value);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// About how many bytes its tables hold, leaving out the bytes of the long words themselves (their
    /// owner counts those as it adds them: summing them here would walk every long word).
    pub(crate) fn table_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Box<str>, V)>() + 1;
        self.short.bytes() + self.long.capacity() * entry
    }

    /// The words, in no particular order.
    #[cfg(test)]
    pub(crate) fn words(&self) -> impl Iterator<Item = (String, &V)> {
        let short = self
            .short
            .iter()
            .map(|(key, value)| (with_inline_word(key, str::to_string), value));
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
        let key = inline_key("straße").unwrap();
        assert_eq!(map.get_inline_hashed(key, map.prefetch(key)), Some(&2));
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
    fn the_inline_table_grows_and_finds_every_word() {
        let mut map = WordMap::with_seed(Seed::random());
        let words: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
        for (i, word) in words.iter().enumerate() {
            map.insert(word, i);
            assert_eq!(map.get(word), Some(&i));
        }
        assert_eq!(map.len(), 5000);
        for (i, word) in words.iter().enumerate() {
            assert_eq!(map.get(word), Some(&i), "{word}");
            assert_eq!(map.get(&format!("{word}x")), None);
        }
        // At most half full: 5,000 words in 16,384 entries (it doubles past 4,096).
        assert_eq!(map.short.entries.len(), 16_384);
        map.insert("w7", 70);
        assert_eq!((map.get("w7"), map.len()), (Some(&70), 5000));
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
        // Words differing only in their last bytes land in many of 1,024 buckets (about 494 of them for
        // 676 words hashed at random), with every seed: without the last fold about one seed in forty
        // crowded them into 400 or fewer. The map's hash and the inline table's agree.
        for _ in 0..200 {
            let seed = Seed::random();
            let mut buckets = std::collections::HashSet::new();
            for c in b'a'..=b'z' {
                for d in b'a'..=b'z' {
                    let key = inline_key(&format!("refundab{}{}", c as char, d as char)).unwrap();
                    let hash = seed.hash_one(key);
                    assert_eq!(hash, seed.hash_key(halves(key)));
                    buckets.insert(hash & 1023);
                }
            }
            assert!(buckets.len() > 400, "{} buckets", buckets.len());
        }
    }
}
