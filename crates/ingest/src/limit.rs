//! A rate limit per project: a token bucket of events per second, kept by each replica. The app key is
//! the only credential of `/track` and is public wherever a browser sends events, so a project's flood
//! must not take the database from every other project. A batch over the limit is refused whole, with
//! `retry: true` (docs/ingest-api.md, Limits).

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;

pub struct RateLimit {
    /// Events per second refilled; 0 turns the limit off.
    per_second: f64,
    /// The most a bucket holds: a burst of this many events passes at once.
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    pub fn new(events_per_second: u64, burst_seconds: f64) -> RateLimit {
        let per_second = events_per_second as f64;
        RateLimit {
            per_second,
            burst: (per_second * burst_seconds).max(per_second),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes `events` from the project's bucket; false (and nothing taken) when there are not enough.
    /// Only known projects get here, so the map holds at most one bucket per project.
    pub fn take(&self, app_key: &str, events: usize) -> bool {
        if self.per_second <= 0.0 {
            return true;
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock();
        let bucket = buckets.entry(app_key.to_string()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= events as f64 {
            bucket.tokens -= events as f64;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_rate_holds_per_project() {
        let limit = RateLimit::new(1000, 2.0);
        assert!(limit.take("a", 1500));
        assert!(limit.take("a", 500));
        assert!(!limit.take("a", 300), "the burst of 2,000 is spent");
        assert!(limit.take("b", 2000), "another project has its own bucket");
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(limit.take("a", 150), "about 200 refilled in 0.2 s");
        assert!(!limit.take("a", 300));
    }

    #[test]
    fn zero_is_no_limit() {
        let limit = RateLimit::new(0, 2.0);
        assert!((0..100).all(|_| limit.take("a", 1_000_000)));
    }
}
