//! Compiled applications shared by the handlers and workers of a process, keyed by company, name and
//! revision: a revision never changes, so an entry is never stale, and a new revision of an application
//! replaces the entries of its older ones. Bounded, dropping the least recently used entry.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::pool::MatchPool;
use crate::error::AnalyticsError;
use analytics_store::AppRow;
use scoring::apps::compiled::CompiledApp;
use scoring::apps::definition::Definition;
use scoring::apps::kept::ScanBudget;

/// How many compiled applications a process keeps by default.
pub const DEFAULT_CAPACITY: usize = 256;

/// The bytes of scanner states the applications of a process keep by default (`scanner_memory_mb`).
pub const DEFAULT_SCANNER_BYTES: usize = 256 << 20;

type Key = (String, String, String);

pub struct AppCache {
    capacity: usize,
    inner: Mutex<Entries>,
    /// The bytes of the scanner states its applications keep, against their limit.
    budget: Arc<ScanBudget>,
    /// The wildcard matching each call may take per application (`CompiledApp::with_scan_steps`).
    scan_steps: u64,
}

#[derive(Default)]
struct Entries {
    /// The compiled application and when it was last used.
    map: HashMap<Key, (Arc<CompiledApp>, u64)>,
    clock: u64,
}

impl AppCache {
    /// A cache of up to `capacity` applications, which keep at most `scanner_bytes` of scanner states
    /// in all.
    pub fn new(capacity: usize, scanner_bytes: usize) -> AppCache {
        AppCache {
            capacity: capacity.max(1),
            inner: Mutex::new(Entries::default()),
            budget: ScanBudget::new(scanner_bytes),
            scan_steps: scoring::apps::compiled::SCAN_BUDGET,
        }
    }

    /// Gives each call `steps` of wildcard matching per application (`SPEECH_ANALYTICS_SCAN_BUDGET_STEPS`).
    pub fn with_scan_steps(mut self, steps: u64) -> AppCache {
        self.scan_steps = steps;
        self
    }

    /// The application of `row` compiled, from the cache or compiled now on the matching pool in the
    /// company's turn: compiling a large application takes seconds of CPU, which must not hold up an HTTP
    /// worker or the runtime (other applications are served from the cache meanwhile).
    pub async fn compiled(
        &self,
        pool: &MatchPool,
        row: &AppRow,
    ) -> Result<Arc<CompiledApp>, AnalyticsError> {
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
        let (owned, budget, steps) = (row.clone(), self.budget.clone(), self.scan_steps);
        let compiled = pool
            .run(&row.company, move || {
                compile(&owned, budget).map(|app| Arc::new(app.with_scan_steps(steps)))
            })
            .await??;
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

    /// The bytes of the scanner states its applications keep now.
    pub fn scanner_bytes(&self) -> usize {
        self.budget.used()
    }
}

impl Default for AppCache {
    fn default() -> Self {
        AppCache::new(DEFAULT_CAPACITY, DEFAULT_SCANNER_BYTES)
    }
}

/// Compiles a stored application. Its definition was checked when it was stored, so a failure here is
/// the store's fault, not the caller's.
fn compile(row: &AppRow, budget: Arc<ScanBudget>) -> Result<CompiledApp, AnalyticsError> {
    let broken = |e: &dyn std::fmt::Display| {
        AnalyticsError::internal(format!(
            "the stored application {} of {} does not read back: {e}",
            row.name, row.company
        ))
    };
    let body: serde_json::Value = serde_json::from_str(&row.definition).map_err(|e| broken(&e))?;
    let definition = Definition::parse(&body).map_err(|e| broken(&e))?;
    CompiledApp::compile(&row.name, &row.revision, &definition, budget).map_err(|e| broken(&e))
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

    #[tokio::test]
    async fn compiles_each_revision_once_and_drops_older_ones() {
        let pool = MatchPool::new(1);
        let cache = AppCache::new(2, DEFAULT_SCANNER_BYTES);
        let first = cache
            .compiled(&pool, &row("billing", "refund"))
            .await
            .unwrap();
        let again = cache
            .compiled(&pool, &row("billing", "refund"))
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!((first.app.as_str(), first.revision.len()), ("billing", 16));

        let changed = cache
            .compiled(&pool, &row("billing", "invoice"))
            .await
            .unwrap();
        assert_ne!(changed.revision, first.revision);
        assert_eq!(cache.len(), 1, "the old revision is dropped");

        cache.compiled(&pool, &row("sales", "x")).await.unwrap();
        cache
            .compiled(&pool, &row("billing", "invoice"))
            .await
            .unwrap(); // billing used last
        cache.compiled(&pool, &row("support", "y")).await.unwrap();
        assert_eq!(cache.len(), 2);
        let kept = cache
            .compiled(&pool, &row("billing", "invoice"))
            .await
            .unwrap();
        assert!(
            Arc::ptr_eq(&kept, &changed),
            "the least recently used (sales) went"
        );
    }

    #[tokio::test]
    async fn the_applications_keep_scanner_states_within_one_budget() {
        let pool = MatchPool::new(1);
        use phrases::{Speaker, Turn};
        let call = [Turn::new(Speaker::Client, 0.0, 1.0, "a refund please")];
        let cache = AppCache::new(1, DEFAULT_SCANNER_BYTES);
        let billing = cache
            .compiled(&pool, &row("billing", "refund*"))
            .await
            .unwrap();
        billing.score(&call, 1.0).unwrap();
        assert_eq!(billing.kept_scanners(), 1);
        let bytes = cache.scanner_bytes();
        assert!(bytes > 0);
        // Another application pushes billing out of the cache; its kept state's bytes come back once the
        // last call holding it lets go.
        let sales = cache.compiled(&pool, &row("sales", "x")).await.unwrap();
        assert_eq!(cache.scanner_bytes(), bytes);
        drop(billing);
        assert_eq!(cache.scanner_bytes(), 0);
        sales.score(&call, 1.0).unwrap();
        assert_eq!(sales.kept_scanners(), 1);
        // A budget of nothing keeps no state: every call learns its words anew.
        let none = AppCache::new(4, 0);
        let billing = none
            .compiled(&pool, &row("billing", "refund*"))
            .await
            .unwrap();
        billing.score(&call, 1.0).unwrap();
        assert_eq!((billing.kept_scanners(), none.scanner_bytes()), (0, 0));
    }

    #[tokio::test]
    async fn a_broken_stored_definition_is_an_internal_error() {
        let mut broken = row("billing", "refund");
        broken.definition = "{\"categories\": 3}".into();
        let pool = MatchPool::new(1);
        assert!(matches!(
            AppCache::default().compiled(&pool, &broken).await,
            Err(AnalyticsError::Internal(_))
        ));
    }

    /// A compile is the pool's work, in the company's turn: while the pool's one slot is held, the
    /// compile waits, and nothing of it runs on the caller's thread.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_application_is_compiled_on_the_matching_pool() {
        let pool = MatchPool::new(1);
        let (release, held) = std::sync::mpsc::channel::<()>();
        let holder = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.run("evil", move || held.recv().unwrap()).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let cache = Arc::new(AppCache::default());
        let compile = {
            let (cache, pool) = (cache.clone(), pool.clone());
            tokio::spawn(async move { cache.compiled(&pool, &row("billing", "refund")).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(
            !compile.is_finished() && cache.is_empty(),
            "compiled beside the pool"
        );
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        let app = compile.await.unwrap().unwrap();
        assert_eq!(app.app, "billing");
        assert_eq!(cache.len(), 1);
    }
}
