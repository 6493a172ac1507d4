//! A small time-bounded cache for hot reads that may be a moment stale (records read on every request).
//! Entries expire `ttl` after insertion; when full, the cache is emptied rather than tracking recency,
//! which keeps reads to one read-lock and one hash lookup. A zero `ttl` disables it.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use parking_lot::RwLock;

pub struct TtlCache<K, V> {
    ttl: Duration,
    capacity: usize,
    entries: RwLock<HashMap<K, (Instant, V)>>,
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration, capacity: usize) -> TtlCache<K, V> {
        TtlCache {
            ttl,
            capacity,
            entries: RwLock::new(HashMap::new()),
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.read();
        let (at, value) = entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| value.clone())
    }

    pub fn insert(&self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.write();
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(key, (Instant::now(), value));
    }

    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.write().remove(key);
    }

    pub fn clear(&self) {
        self.entries.write().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_the_ttl() {
        let cache = TtlCache::new(Duration::from_millis(30), 10);
        cache.insert("a".to_string(), 1);
        assert_eq!(cache.get("a"), Some(1));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(cache.get("a"), None);
    }

    #[test]
    fn a_full_cache_starts_over_and_zero_ttl_disables_it() {
        let cache = TtlCache::new(Duration::from_secs(60), 2);
        cache.insert(1, "x");
        cache.insert(2, "y");
        cache.insert(3, "z");
        assert_eq!((cache.get(&1), cache.get(&3)), (None, Some("z")));
        cache.remove(&3);
        assert_eq!(cache.get(&3), None);
        let off = TtlCache::new(Duration::ZERO, 2);
        off.insert(1, "x");
        assert_eq!(off.get(&1), None);
    }
}
