//! Compiled applications shared by the handlers and workers of a process, keyed by company, name and
//! revision: a revision never changes, so an entry is never stale, and a new revision of an application
//! replaces the entries of its older ones. Bounded, dropping the least recently used entry.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::compiled::CompiledApp;
use super::definition::Definition;
use crate::error::AnalyticsError;
use crate::store::AppRow;

/// How many compiled applications a process keeps by default.
pub const DEFAULT_CAPACITY: usize = 256;

type Key = (String, String, String);

pub struct AppCache {
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    /// The compiled application and when it was last used.
    map: HashMap<Key, (Arc<CompiledApp>, u64)>,
    clock: u64,
}

impl AppCache {
    pub fn new(capacity: usize) -> AppCache {
        AppCache {
            capacity: capacity.max(1),
            inner: Mutex::new(Entries::default()),
        }
    }

    /// The application of `row` compiled, from the cache or compiled now (outside the lock, so other
    /// applications are served meanwhile).
    pub fn compiled(&self, row: &AppRow) -> Result<Arc<CompiledApp>, AnalyticsError> {
        let key = (row.company.clone(), row.name.clone(), row.revision.clone());
        {
            let mut entries = self.inner.lock();
            entries.clock += 1;
            let now = entries.clock;
            if let Some((compiled, used)) = entries.map.get_mut(&key) {
                *used = now;
                return Ok(compiled.clone());
            }
        }
        let compiled = Arc::new(compile(row)?);
        let mut entries = self.inner.lock();
        entries.clock += 1;
        let now = entries.clock;
        entries
            .map
            .retain(|(company, name, _), _| !(company == &row.company && name == &row.name));
        entries.map.insert(key, (compiled.clone(), now));
        while entries.map.len() > self.capacity {
            let oldest = entries
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            match oldest {
                Some(key) => entries.map.remove(&key),
                None => break,
            };
        }
        Ok(compiled)
    }

    /// How many compiled applications are kept.
    pub fn len(&self) -> usize {
        self.inner.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for AppCache {
    fn default() -> Self {
        AppCache::new(DEFAULT_CAPACITY)
    }
}

/// Compiles a stored application. Its definition was checked when it was stored, so a failure here is
/// the store's fault, not the caller's.
fn compile(row: &AppRow) -> Result<CompiledApp, AnalyticsError> {
    let broken = |e: &dyn std::fmt::Display| {
        AnalyticsError::internal(format!(
            "the stored application {} of {} does not read back: {e}",
            row.name, row.company
        ))
    };
    let body: serde_json::Value = serde_json::from_str(&row.definition).map_err(|e| broken(&e))?;
    let definition = Definition::parse(&body).map_err(|e| broken(&e))?;
    Ok(CompiledApp::compile(&row.name, &row.revision, &definition))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, phrase: &str) -> AppRow {
        let body = serde_json::json!({"categories": {"A": {"phrases": [phrase]}}});
        let definition = Definition::parse(&body).unwrap();
        AppRow {
            company: "acme".into(),
            name: name.into(),
            definition: definition.normalized(),
            revision: definition.revision(),
            updated: "2026-11-20T10:00:00.000Z".into(),
        }
    }

    #[test]
    fn compiles_each_revision_once_and_drops_older_ones() {
        let cache = AppCache::new(2);
        let first = cache.compiled(&row("billing", "refund")).unwrap();
        let again = cache.compiled(&row("billing", "refund")).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!((first.app.as_str(), first.revision.len()), ("billing", 16));

        let changed = cache.compiled(&row("billing", "invoice")).unwrap();
        assert_ne!(changed.revision, first.revision);
        assert_eq!(cache.len(), 1, "the old revision is dropped");

        cache.compiled(&row("sales", "x")).unwrap();
        cache.compiled(&row("billing", "invoice")).unwrap(); // billing used last
        cache.compiled(&row("support", "y")).unwrap();
        assert_eq!(cache.len(), 2);
        let kept = cache.compiled(&row("billing", "invoice")).unwrap();
        assert!(
            Arc::ptr_eq(&kept, &changed),
            "the least recently used (sales) went"
        );
    }

    #[test]
    fn a_broken_stored_definition_is_an_internal_error() {
        let mut broken = row("billing", "refund");
        broken.definition = "{\"categories\": 3}".into();
        assert!(matches!(
            AppCache::default().compiled(&broken),
            Err(AnalyticsError::Internal(_))
        ));
    }
}
