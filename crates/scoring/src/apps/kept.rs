//! The scanner states the compiled applications of a process keep from one call to the next, within one
//! budget of bytes for them all. A state holds the words its scanner has learnt (a few MB for a company's
//! calls), each application keeps a few, and the cache holds hundreds of applications: without a budget
//! for them all, a process scoring the calls of many applications could keep gigabytes. When the budget
//! is spent, a state to keep takes the room of one kept by the application that has gone longest without
//! a call, so the applications in use keep theirs; a state that finds no room is dropped, which costs its
//! next call a scanner that learns its words anew (docs/phrases.md, How matching is fast).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use phrases::ScanState;

/// How many scanners' states an application keeps for its next calls: about as many as score calls with
/// it at once.
pub const KEPT_SCANNERS: usize = 4;

/// The largest scanner's state kept. The words of a company's calls (tens of thousands) take a few MB; a
/// state grown past this, by transcripts of endless distinct words, is dropped rather than kept.
pub const MAX_KEPT_BYTES: usize = 8 << 20;

/// The bytes of kept states of every application of a process, and their limit (`scanner_memory_mb`).
#[derive(Debug)]
pub struct ScanBudget {
    limit: usize,
    used: AtomicUsize,
    /// Counts the takes and keeps of states, to tell which application went longest without one.
    clock: AtomicU64,
    /// Every application's shelf, to take room from when the budget is spent.
    shelves: Mutex<Vec<Weak<Shelf>>>,
}

impl ScanBudget {
    pub fn new(limit: usize) -> Arc<ScanBudget> {
        Arc::new(ScanBudget {
            limit,
            used: AtomicUsize::new(0),
            clock: AtomicU64::new(0),
            shelves: Mutex::new(Vec::new()),
        })
    }

    /// The bytes of the states kept now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Counts `bytes` more when they fit within the limit.
    fn reserve(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Counts `bytes` more, dropping the states of the shelves used longest ago (never `keeper`'s) until
    /// they fit; false when they do not fit even with every other state dropped, in which case none is
    /// dropped.
    fn make_room(&self, bytes: usize, keeper: &Arc<Shelf>) -> bool {
        if bytes.saturating_add(keeper.bytes.load(Ordering::Relaxed)) > self.limit {
            return false;
        }
        while !self.reserve(bytes) {
            // One shelf locked at a time (the keeper's is not held here), so two applications making
            // room at once cannot wait on each other.
            let victim = {
                let mut shelves = self.shelves.lock();
                shelves.retain(|shelf| shelf.strong_count() > 0);
                shelves
                    .iter()
                    .filter_map(Weak::upgrade)
                    .filter(|shelf| !Arc::ptr_eq(shelf, keeper) && shelf.count() > 0)
                    .min_by_key(|shelf| shelf.last_used.load(Ordering::Relaxed))
            };
            let Some(victim) = victim else {
                return false;
            };
            // Dropped outside every lock: a state is MBs of tables.
            drop(victim.pop(self));
        }
        true
    }
}

/// The states one application keeps, their bytes, and when it last took or kept one.
struct Shelf {
    /// Each state with the bytes it was counted for.
    states: Mutex<Vec<(ScanState, usize)>>,
    /// The sum of those bytes, read without the lock: what the budget cannot take from this shelf to
    /// make room for a state of its own.
    bytes: AtomicUsize,
    last_used: AtomicU64,
}

impl Shelf {
    fn count(&self) -> usize {
        self.states.lock().len()
    }

    /// Its last state, whose bytes go back to the budget.
    fn pop(&self, budget: &ScanBudget) -> Option<ScanState> {
        let (state, bytes) = self.states.lock().pop()?;
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
        budget.release(bytes);
        Some(state)
    }
}

/// One application's kept states. Their bytes go back to the budget when a state is taken for a call, is
/// dropped to make room for another application's, or when the application is dropped (out of the cache)
/// with states still kept.
pub struct KeptStates {
    budget: Arc<ScanBudget>,
    shelf: Arc<Shelf>,
}

impl KeptStates {
    pub fn new(budget: Arc<ScanBudget>) -> KeptStates {
        let shelf = Arc::new(Shelf {
            states: Mutex::new(Vec::new()),
            bytes: AtomicUsize::new(0),
            last_used: AtomicU64::new(budget.tick()),
        });
        let mut shelves = budget.shelves.lock();
        // Those of applications gone, so that the list does not grow with every revision compiled.
        shelves.retain(|shelf| shelf.strong_count() > 0);
        shelves.push(Arc::downgrade(&shelf));
        drop(shelves);
        KeptStates { budget, shelf }
    }

    /// A kept state, for one call's scanner.
    pub fn take(&self) -> Option<ScanState> {
        self.shelf
            .last_used
            .store(self.budget.tick(), Ordering::Relaxed);
        self.shelf.pop(&self.budget)
    }

    /// Keeps a state for a later call when the application keeps fewer than [`KEPT_SCANNERS`], the state
    /// is no larger than [`MAX_KEPT_BYTES`] and the budget has room for it, or can be given room by the
    /// applications used longest ago; drops it otherwise.
    pub fn keep(&self, state: ScanState) {
        self.shelf
            .last_used
            .store(self.budget.tick(), Ordering::Relaxed);
        let bytes = state.bytes();
        if bytes > MAX_KEPT_BYTES
            || self.shelf.count() >= KEPT_SCANNERS
            || !self.budget.make_room(bytes, &self.shelf)
        {
            return;
        }
        let mut states = self.shelf.states.lock();
        if states.len() < KEPT_SCANNERS {
            states.push((state, bytes));
            self.shelf.bytes.fetch_add(bytes, Ordering::Relaxed);
        } else {
            // Others were kept meanwhile.
            self.budget.release(bytes);
        }
    }

    /// How many states are kept.
    pub fn len(&self) -> usize {
        self.shelf.count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for KeptStates {
    fn drop(&mut self) {
        let states = std::mem::take(&mut *self.shelf.states.lock());
        let bytes: usize = states.iter().map(|(_, bytes)| bytes).sum();
        self.shelf.bytes.fetch_sub(bytes, Ordering::Relaxed);
        self.budget.release(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phrases::{MatcherBuilder, Phrase, Speaker, Turn};

    /// A state of a scanner that has scanned one turn of `words` distinct words.
    fn state(words: usize) -> ScanState {
        let mut builder = MatcherBuilder::new();
        builder.add(1, Phrase::parse("w*").unwrap(), None);
        let matcher = builder.build().unwrap();
        let text: Vec<String> = (0..words).map(|i| format!("w{i}")).collect();
        let mut scanner = matcher.scanner();
        scanner.scan(&[Turn::new(Speaker::Agent, 0.0, 1.0, text.join(" "))], 1.0);
        scanner.into_state()
    }

    #[test]
    fn the_applications_used_longest_ago_give_their_room_to_those_in_use() {
        let one = state(100).bytes();
        // Room for two states of this size, not three.
        let budget = ScanBudget::new(2 * one + one / 2);
        let billing = KeptStates::new(budget.clone());
        let sales = KeptStates::new(budget.clone());
        let support = KeptStates::new(budget.clone());
        billing.keep(state(100));
        sales.keep(state(100));
        assert_eq!(budget.used(), 2 * one);
        // A third state takes the room of the one of the application used longest ago: billing.
        support.keep(state(100));
        let counts =
            |budget: &ScanBudget| (billing.len(), sales.len(), support.len(), budget.used());
        assert_eq!(counts(&budget), (0, 1, 1, 2 * one));
        // A call of sales takes its state and keeps it back: billing's next state then takes the room
        // of support's, not of sales's.
        sales.keep(sales.take().unwrap());
        billing.keep(state(100));
        assert_eq!(counts(&budget), (1, 1, 0, 2 * one));
        // With no other application keeping any, a state that does not fit is dropped: billing keeps
        // two, not three.
        billing.keep(state(100));
        billing.keep(state(100));
        assert_eq!(counts(&budget), (2, 0, 0, 2 * one));
        // A state taken for a call gives its bytes back.
        assert!(billing.take().is_some());
        assert_eq!(budget.used(), one);
        // An application dropped (out of the cache) gives back the bytes of the states it kept.
        drop(billing);
        assert_eq!(budget.used(), 0);
        support.keep(state(100));
        sales.keep(state(100));
        assert_eq!(budget.used(), 2 * one);
    }

    #[test]
    fn no_state_is_dropped_for_one_that_would_not_fit_anyway() {
        let one = state(100).bytes();
        // A state of more than one and a half of those.
        let words = (200..)
            .step_by(100)
            .find(|&words| 2 * state(words).bytes() > 3 * one)
            .unwrap();
        let large_bytes = state(words).bytes();
        // Room for the large one and half a small one: for two small ones, not for a small one beside
        // the large one.
        let budget = ScanBudget::new(large_bytes + one / 2);
        let (billing, sales) = (
            KeptStates::new(budget.clone()),
            KeptStates::new(budget.clone()),
        );
        sales.keep(state(100));
        billing.keep(state(100));
        assert_eq!(budget.used(), 2 * one);
        // Billing's own small state and the large one do not fit together whatever sales gives up, so
        // sales keeps its state and the large one is dropped.
        billing.keep(state(words));
        assert_eq!((billing.len(), sales.len(), budget.used()), (1, 1, 2 * one));
        // Once billing's small state is taken for a call, the large one takes sales's room.
        assert!(billing.take().is_some());
        billing.keep(state(words));
        assert_eq!(
            (billing.len(), sales.len(), budget.used()),
            (1, 0, large_bytes)
        );
    }

    #[test]
    fn calls_at_once_keep_the_count_of_bytes_right() {
        let one = state(50).bytes();
        let budget = ScanBudget::new(5 * one);
        let apps: Vec<Arc<KeptStates>> = (0..4)
            .map(|_| Arc::new(KeptStates::new(budget.clone())))
            .collect();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let apps = apps.clone();
                std::thread::spawn(move || {
                    for i in 0..100 {
                        let app = &apps[(t + i) % apps.len()];
                        let taken = app.take().unwrap_or_else(|| state(50));
                        app.keep(taken);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let kept: usize = apps.iter().map(|app| app.len()).sum();
        assert!((1..=5).contains(&kept), "{kept}");
        assert_eq!(budget.used(), kept * one);
        drop(apps);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn an_application_keeps_a_few_states_none_too_large() {
        let budget = ScanBudget::new(usize::MAX);
        let kept = KeptStates::new(budget.clone());
        for _ in 0..KEPT_SCANNERS + 2 {
            kept.keep(state(10));
        }
        assert_eq!(kept.len(), KEPT_SCANNERS);
        // Past MAX_KEPT_BYTES: 150,000 distinct words learnt (each of them matching the pattern).
        let large = state(150_000);
        assert!(large.bytes() > MAX_KEPT_BYTES, "{}", large.bytes());
        assert!(kept.take().is_some());
        let before = budget.used();
        kept.keep(large);
        assert_eq!((kept.len(), budget.used()), (KEPT_SCANNERS - 1, before));
    }

    #[test]
    fn a_budget_of_nothing_keeps_nothing() {
        let budget = ScanBudget::new(0);
        let kept = KeptStates::new(budget.clone());
        kept.keep(state(10));
        assert!(kept.is_empty());
        assert_eq!(budget.used(), 0);
    }
}
