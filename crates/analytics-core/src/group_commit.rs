//! Requests committed together (group commit): metadata changes (`crate::metadata::batch`) and calls
//! added to folders (`calls::batch`). A request that has passed its checks joins a queue and waits for
//! its answer; one task per queue takes what is queued (up to `most`) and commits it in one transaction.
//!
//! Committed one by one, each request is a transaction of several statements, each a hand-off to
//! SQLite's thread (or a round trip to PostgreSQL), under the database's single write lock: under load
//! the machine spends its time handing statements over. A batch pays for that once, and the burst of
//! requests that made it wait is exactly what fills the next batch.
//!
//! The queues are shards by a key of the request (its call): each shard commits one batch at a time, so
//! the requests of one key are applied in the order they came, and a batch waiting for a row something
//! else holds locked holds up only its own shard. The committing task runs on its own, so a request
//! whose client hung up never cuts a batch off half way; a panic answers its own batch (each request
//! gets `None`), not the requests after it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use tokio::sync::oneshot;

/// Queues of requests `R` answered with `A`.
pub struct GroupCommit<R, A> {
    shards: Vec<Mutex<Queue<R, A>>>,
    /// Requests committed in one batch at most.
    most: usize,
    /// The runtime the committing tasks run on: the service's multi-threaded one where it was built in
    /// one. Spawned from a request, a task would run on that HTTP worker's own single thread, where every
    /// statement's answer waits behind the requests the thread is serving.
    runtime: Option<tokio::runtime::Handle>,
    /// Batches taken so far, for tests and metrics.
    taken: AtomicU64,
}

struct Queue<R, A> {
    waiting: Vec<(R, oneshot::Sender<A>)>,
    running: bool,
}

impl<R, A> Default for Queue<R, A> {
    fn default() -> Self {
        Queue {
            waiting: Vec::new(),
            running: false,
        }
    }
}

impl<R: Send + 'static, A: Send + 'static> GroupCommit<R, A> {
    /// Queues in `shards` shards (one for SQLite, whose writers take turns anyway; a few for
    /// PostgreSQL, whose transactions lock only their own rows), batches of at most `most`.
    pub fn new(shards: usize, most: usize) -> Arc<GroupCommit<R, A>> {
        Arc::new(GroupCommit {
            shards: (0..shards.max(1)).map(|_| Mutex::default()).collect(),
            most: most.max(1),
            runtime: tokio::runtime::Handle::try_current()
                .ok()
                .filter(|r| r.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread),
            taken: AtomicU64::new(0),
        })
    }

    /// Batches taken so far.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// Requests waiting for a batch.
    pub fn waiting(&self) -> usize {
        (0..self.shards.len())
            .map(|s| self.queue(s).waiting.len())
            .sum()
    }

    /// The shard of a key's requests.
    pub fn shard_of(&self, key: &str) -> usize {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        (hasher.finish() % self.shards.len() as u64) as usize
    }

    /// Queues `request` in the shard of `key`, starts the shard's committing task if none runs, and
    /// waits for the answer; `None` when its batch ended without one (it panicked). `commit` takes a
    /// batch and answers each of its requests, in their order.
    pub async fn submit<C, F>(self: &Arc<Self>, key: &str, request: R, commit: C) -> Option<A>
    where
        C: Fn(Vec<R>) -> F + Send + 'static,
        F: Future<Output = Vec<A>> + Send + 'static,
    {
        let shard = self.shard_of(key);
        let (answer, answered) = oneshot::channel();
        let start = {
            let mut queue = self.queue(shard);
            queue.waiting.push((request, answer));
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            let task = self.clone().run(shard, commit);
            match self.runtime.clone() {
                Some(runtime) => runtime.spawn(task),
                None => tokio::spawn(task),
            };
        }
        answered.await.ok()
    }

    /// Commits the shard's batches until its queue is empty; the next request starts a new task.
    async fn run<C, F>(self: Arc<Self>, shard: usize, commit: C)
    where
        C: Fn(Vec<R>) -> F,
        F: Future<Output = Vec<A>>,
    {
        loop {
            let batch: Vec<(R, oneshot::Sender<A>)> = {
                let mut queue = self.queue(shard);
                if queue.waiting.is_empty() {
                    queue.running = false;
                    return;
                }
                let n = queue.waiting.len().min(self.most);
                queue.waiting.drain(..n).collect()
            };
            self.taken.fetch_add(1, Ordering::Relaxed);
            let (requests, senders): (Vec<R>, Vec<oneshot::Sender<A>>) = batch.into_iter().unzip();
            // A panic drops the batch's senders unanswered.
            let answers = std::panic::AssertUnwindSafe(commit(requests))
                .catch_unwind()
                .await;
            if let Ok(answers) = answers {
                for (sender, answer) in senders.into_iter().zip(answers) {
                    let _ = sender.send(answer);
                }
            }
        }
    }

    fn queue(&self, shard: usize) -> std::sync::MutexGuard<'_, Queue<R, A>> {
        // The lock is held only to push or take requests, which cannot panic half way.
        self.shards[shard].lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests queued while a batch commits are taken together in the next one, each answered in turn.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_waiting_behind_a_batch_form_the_next() {
        let group: Arc<GroupCommit<u32, u32>> = GroupCommit::new(1, 100);
        let (release, released) = tokio::sync::watch::channel(false);
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let commit = {
            let sizes = sizes.clone();
            move |batch: Vec<u32>| {
                let sizes = sizes.clone();
                let mut released = released.clone();
                async move {
                    sizes.lock().unwrap().push(batch.len());
                    let _ = released.wait_for(|r| *r).await;
                    batch.into_iter().map(|r| r * 10).collect()
                }
            }
        };
        let first = tokio::spawn({
            let (group, commit) = (group.clone(), commit.clone());
            async move { group.submit("a", 1, commit).await }
        });
        while group.taken() < 1 {
            tokio::task::yield_now().await;
        }
        let rest: Vec<_> = (2..=5)
            .map(|r| {
                let (group, commit) = (group.clone(), commit.clone());
                tokio::spawn(async move { group.submit("a", r, commit).await })
            })
            .collect();
        while group.waiting() < 4 {
            tokio::task::yield_now().await;
        }
        release.send(true).unwrap();
        assert_eq!(first.await.unwrap(), Some(10));
        for (task, r) in rest.into_iter().zip(2..) {
            assert_eq!(task.await.unwrap(), Some(r * 10));
        }
        assert_eq!(*sizes.lock().unwrap(), vec![1, 4]);
        assert_eq!(group.taken(), 2);
    }

    /// A batch that panics answers its own requests with `None`; the next batch is committed as usual.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_batch_answers_none_and_the_next_goes_on() {
        let group: Arc<GroupCommit<u32, u32>> = GroupCommit::new(1, 100);
        let commit = |batch: Vec<u32>| async move {
            assert!(!batch.contains(&0), "a request of 0 panics its batch");
            batch
        };
        assert_eq!(group.submit("a", 0, commit).await, None);
        assert_eq!(group.submit("a", 7, commit).await, Some(7));
    }

    /// At most `most` requests per batch: six waiting behind a batch go in two batches of three.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_holds_at_most_most() {
        let group: Arc<GroupCommit<u32, usize>> = GroupCommit::new(1, 3);
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let commit = {
            let gate = gate.clone();
            move |batch: Vec<u32>| {
                let gate = gate.clone();
                async move {
                    gate.acquire().await.unwrap().forget();
                    vec![batch.len(); batch.len()]
                }
            }
        };
        let submit = |r: u32| {
            let (group, commit) = (group.clone(), commit.clone());
            tokio::spawn(async move { group.submit("k", r, commit).await })
        };
        let first = submit(0);
        while group.taken() < 1 {
            tokio::task::yield_now().await;
        }
        let rest: Vec<_> = (1..7).map(submit).collect();
        while group.waiting() < 6 {
            tokio::task::yield_now().await;
        }
        gate.add_permits(3);
        assert_eq!(first.await.unwrap(), Some(1));
        for task in rest {
            assert_eq!(task.await.unwrap(), Some(3));
        }
        assert_eq!(group.taken(), 3);
    }
}
