//! Where calls are matched and scored: a bounded pool apart from the HTTP workers and the runtime's I/O
//! threads, shared fairly by companies. Matching is CPU work that can take long for a large application
//! and a long call; run on an HTTP worker it held up every company's requests, and run inline on the
//! runtime it held up uploads. Here at most `slots` matches run at once, on threads of their own, and a
//! freed slot goes to the companies waiting in turn (round robin), so one company's backlog delays
//! another's next match by at most one match per slot.
//!
//! The pool's threads run under Linux's idle scheduling policy (`SCHED_IDLE`): they may use every core
//! the requests leave idle, but a thread of any other policy that wakes takes the core from a match at
//! once, where even a match at nice 19 would keep it to the end of its time slice (docs/operations.md,
//! Sharing the platform between companies).

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex};

use tokio::sync::oneshot;

use crate::error::AnalyticsError;

/// The matching pool: `run` a company's match in it.
#[derive(Clone)]
pub struct MatchPool {
    gate: Arc<Gate>,
    threads: Arc<Threads>,
}

impl MatchPool {
    /// A pool of `slots` matches at once (at least one), each on a thread of its own.
    pub fn new(slots: usize) -> MatchPool {
        let slots = slots.max(1);
        MatchPool {
            gate: Arc::new(Gate {
                slots,
                state: Mutex::new(State::default()),
            }),
            threads: Arc::new(Threads::start(slots)),
        }
    }

    /// Runs `work` for `company` once a slot is its turn, on one of the pool's threads.
    pub async fn run<T, F>(&self, company: &str, work: F) -> Result<T, AnalyticsError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let _slot = self.gate.clone().enter(company).await;
        let (done, answer) = oneshot::channel();
        self.threads.send(Box::new(move || {
            let _ = done.send(catch_unwind(AssertUnwindSafe(work)));
        }))?;
        match answer.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(AnalyticsError::internal("a match ended badly: it panicked")),
            Err(_) => Err(AnalyticsError::internal(
                "a match ended badly: its thread is gone",
            )),
        }
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The pool's threads, taking jobs from one queue; they end when the pool is dropped.
struct Threads {
    jobs: mpsc::Sender<Job>,
}

impl Threads {
    fn start(count: usize) -> Threads {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..count {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("matcher-{i}"))
                .spawn(move || {
                    lower_priority();
                    loop {
                        let job = queue
                            .lock()
                            .expect("the queue's lock is never poisoned")
                            .recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })
                .expect("a matching thread starts");
        }
        Threads { jobs }
    }

    fn send(&self, job: Job) -> Result<(), AnalyticsError> {
        self.jobs
            .send(job)
            .map_err(|_| AnalyticsError::internal("the matching threads are gone"))
    }
}

/// Puts the calling thread under the idle scheduling policy, which lowering one's own priority needs no
/// privilege for. Elsewhere than Linux the thread keeps the default policy.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::unix::{
            set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
            ThreadSchedulePolicy,
        };
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let priority = thread_priority::ThreadPriority::Min;
        if let Err(e) = set_thread_priority_and_policy(thread_native_id(), priority, idle) {
            tracing::warn!(error = ?e, "a matching thread keeps the default scheduling policy");
        }
    }
}

struct Gate {
    slots: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Slots held.
    busy: usize,
    /// Who waits, by company, first come first.
    waiting: HashMap<String, VecDeque<oneshot::Sender<()>>>,
    /// The companies that wait, in the order their turns come; each at most once.
    turns: VecDeque<String>,
}

/// A slot held; given back (to the next company in turn) when dropped.
struct Slot(Arc<Gate>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// A wait for a slot; if it is given up after the slot was handed to it, the slot is passed on.
struct Waiting {
    gate: Arc<Gate>,
    handed: oneshot::Receiver<()>,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.done && self.handed.try_recv().is_ok() {
            self.gate.leave();
        }
    }
}

impl Gate {
    async fn enter(self: Arc<Self>, company: &str) -> Slot {
        let handed = {
            let mut guard = self
                .state
                .lock()
                .expect("the gate's lock is never poisoned");
            let state = &mut *guard;
            if state.busy < self.slots && state.turns.is_empty() {
                state.busy += 1;
                return Slot(self.clone());
            }
            let (hand, handed) = oneshot::channel();
            let queue = state.waiting.entry(company.to_string()).or_default();
            if queue.is_empty() {
                state.turns.push_back(company.to_string());
            }
            queue.push_back(hand);
            handed
        };
        let mut waiting = Waiting {
            gate: self.clone(),
            handed,
            done: false,
        };
        // The sender is only dropped unsent once its waiter is gone, which this one is not.
        let _ = (&mut waiting.handed).await;
        waiting.done = true;
        Slot(self)
    }

    /// A slot is given back: to the first waiter of the company whose turn it is, else freed.
    fn leave(&self) {
        let mut state = self
            .state
            .lock()
            .expect("the gate's lock is never poisoned");
        while let Some(company) = state.turns.pop_front() {
            let queue = state
                .waiting
                .get_mut(&company)
                .expect("a company in turn waits");
            let hand = queue.pop_front().expect("a company in turn waits");
            if queue.is_empty() {
                state.waiting.remove(&company);
            } else {
                state.turns.push_back(company);
            }
            if hand.send(()).is_ok() {
                return;
            }
            // That waiter gave up: the next one.
        }
        state.busy -= 1;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn companies_take_turns_whatever_their_backlog() {
        let pool = MatchPool::new(1);
        let order = Arc::new(Mutex::new(Vec::new()));
        // The slot is held while evil queues ten matches, then acme one.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let holder = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.run("evil", move || held.recv().unwrap()).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut tasks = Vec::new();
        for (i, company) in (0..10).map(|i| (i, "evil")).chain([(10, "acme")]) {
            let (pool, order) = (pool.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                pool.run(company, move || order.lock().unwrap().push((i, company)))
                    .await
                    .unwrap()
            }));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        for task in tasks {
            task.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        let acme = order.iter().position(|(_, c)| *c == "acme").unwrap();
        assert!(
            acme <= 1,
            "acme's match came after {acme} of evil's: {order:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_more_than_the_slots_run_at_once() {
        let pool = MatchPool::new(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..12)
            .map(|i| {
                let (pool, running, most) = (pool.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    let company = format!("c{}", i % 3);
                    pool.run(&company, move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                    })
                    .await
                    .unwrap()
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn matches_run_below_the_priority_of_the_requests() {
        use thread_priority::unix::{
            thread_schedule_policy, NormalThreadSchedulePolicy, ThreadSchedulePolicy,
        };
        let idle = ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle);
        let pool = MatchPool::new(2);
        let here = thread_schedule_policy().unwrap();
        assert_ne!(here, idle);
        for company in ["a", "b", "c"] {
            let there = pool
                .run(company, || thread_schedule_policy().unwrap())
                .await
                .unwrap();
            assert_eq!(there, idle, "a match ran under {there:?}");
        }
        assert_eq!(thread_schedule_policy().unwrap(), here);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_match_that_panics_fails_only_itself() {
        let pool = MatchPool::new(1);
        let failed = pool.run("a", || panic!("a bad match")).await;
        assert!(
            matches!(failed, Err(AnalyticsError::Internal(_))),
            "{failed:?}"
        );
        assert_eq!(pool.run("a", || 7).await.unwrap(), 7);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wait_given_up_passes_its_slot_on() {
        let pool = MatchPool::new(1);
        let (release, held) = std::sync::mpsc::channel::<()>();
        let holder = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.run("a", move || held.recv().unwrap()).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let gone = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.run("b", || ()).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        gone.abort();
        release.send(()).unwrap();
        holder.await.unwrap().unwrap();
        let done = tokio::time::timeout(Duration::from_secs(5), pool.run("c", || 7)).await;
        assert_eq!(done.expect("the slot was passed on").unwrap(), 7);
    }
}
