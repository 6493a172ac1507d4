//! Password checks off the async workers. An argon2id verification takes tens of milliseconds of CPU: on
//! a worker it would stall every request sharing that worker (client-credentials latency went from 5 ms
//! to 775 ms under 25 concurrent logins). Checks run on the blocking pool, at most one per CPU at a time,
//! so a burst of logins queues instead of starving the token endpoint.

use std::sync::LazyLock;

use tokio::sync::Semaphore;

static PERMITS: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2),
    )
});

/// Whether `password` matches `hash` (with no hash, a dummy check of the same cost that fails).
pub async fn verify(password: &str, hash: Option<&str>) -> bool {
    let Ok(_permit) = PERMITS.acquire().await else {
        return false;
    };
    let password = password.to_string();
    let hash = hash.map(str::to_string);
    tokio::task::spawn_blocking(move || {
        common::secrets::verify_password(&password, hash.as_deref())
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// On a single-threaded runtime, another task keeps running while a password is checked: the check
    /// waits on the blocking pool instead of holding the only worker. Checked inline, the check would
    /// finish before the other task was polled once.
    #[test]
    fn a_password_check_leaves_the_worker_free() {
        let hash = common::secrets::hash_password("correct horse");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let polls = Arc::new(AtomicUsize::new(0));
            let counter = polls.clone();
            let other = tokio::spawn(async move {
                loop {
                    counter.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            });
            assert!(super::verify("correct horse", Some(&hash)).await);
            let during = polls.load(Ordering::Relaxed);
            other.abort();
            assert!(
                during > 0,
                "the other task never ran while the password was checked"
            );
        });
    }
}
