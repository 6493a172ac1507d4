//! The scanner states the compiled applications of a process keep from one call to the next, within one
//! budget of bytes for them all. A state holds the words its scanner has learnt (a few MB for a company's
//! calls), each application keeps a few, and the cache holds hundreds of applications: without a budget
//! for them all, a process scoring the calls of many applications could keep gigabytes. Past the budget a
//! state is dropped rather than kept, which costs its next call a scanner that learns its words anew
//! (docs/phrases.md, How matching is fast).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use phrases::ScanState;

/// How many scanners' states an application keeps for its next calls: about as many as score calls with
/// it at once.
pub const KEPT_SCANNERS: usize = 4;

/// The largest scanner's state kept. The words of a company's calls (tens of thousands) take a few MB; a
/// state grown past this, by transcripts of endless distinct words, is dropped rather than kept.
pub const MAX_KEPT_BYTES: usize = 8 << 20;

/// The bytes of kept states of every application of a process, and their limit
/// (`scanner_memory_mb`).
#[derive(Debug)]
pub struct ScanBudget {
    limit: usize,
    used: AtomicUsize,
}

impl ScanBudget {
    pub fn new(limit: usize) -> Arc<ScanBudget> {
        Arc::new(ScanBudget {
            limit,
            used: AtomicUsize::new(0),
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
}

/// One application's kept states, each with the bytes it was counted for; their bytes go back to the
/// budget when a state is taken for a call, or when the application is dropped with states still kept.
pub struct KeptStates {
    budget: Arc<ScanBudget>,
    states: Mutex<Vec<(ScanState, usize)>>,
}

impl KeptStates {
    pub fn new(budget: Arc<ScanBudget>) -> KeptStates {
        KeptStates {
            budget,
            states: Mutex::new(Vec::new()),
        }
    }

    /// A kept state, for one call's scanner.
    pub fn take(&self) -> Option<ScanState> {
        let (state, bytes) = self.states.lock().pop()?;
        self.budget.release(bytes);
        Some(state)
    }

    /// Keeps a state for a later call when the application keeps fewer than [`KEPT_SCANNERS`], the state
    /// is no larger than [`MAX_KEPT_BYTES`] and the budget has room for it; drops it otherwise.
    pub fn keep(&self, state: ScanState) {
        let bytes = state.bytes();
        if bytes > MAX_KEPT_BYTES {
            return;
        }
        let mut states = self.states.lock();
        if states.len() < KEPT_SCANNERS && self.budget.reserve(bytes) {
            states.push((state, bytes));
        }
    }

    /// How many states are kept.
    pub fn len(&self) -> usize {
        self.states.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for KeptStates {
    fn drop(&mut self) {
        let bytes: usize = self.states.get_mut().iter().map(|(_, bytes)| bytes).sum();
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
        let matcher = builder.build();
        let text: Vec<String> = (0..words).map(|i| format!("w{i}")).collect();
        let mut scanner = matcher.scanner();
        scanner.scan(&[Turn::new(Speaker::Agent, 0.0, 1.0, text.join(" "))], 1.0);
        scanner.into_state()
    }

    #[test]
    fn states_are_kept_within_the_budget_and_give_their_bytes_back() {
        let one = state(100).bytes();
        // Room for two states of this size, not three.
        let budget = ScanBudget::new(2 * one + one / 2);
        let billing = KeptStates::new(budget.clone());
        let sales = KeptStates::new(budget.clone());
        billing.keep(state(100));
        sales.keep(state(100));
        assert_eq!(budget.used(), 2 * one);
        // A third is dropped, whichever application keeps it.
        billing.keep(state(100));
        sales.keep(state(100));
        assert_eq!((billing.len(), sales.len(), budget.used()), (1, 1, 2 * one));
        // A state taken for a call gives its bytes back, so another can be kept.
        assert!(billing.take().is_some());
        assert_eq!(budget.used(), one);
        sales.keep(state(100));
        assert_eq!((billing.len(), sales.len(), budget.used()), (0, 2, 2 * one));
        // An application dropped (out of the cache) gives back the bytes of the states it kept.
        drop(sales);
        assert_eq!(budget.used(), 0);
        assert!(billing.take().is_none());
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
