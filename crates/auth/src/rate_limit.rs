//! A fixed-window limiter of login attempts per client address, in memory. It slows password spraying
//! across many accounts, which the per-account lockout alone does not stop. Each replica counts its own
//! attempts, so with N replicas an address gets at most N times the limit.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

pub struct AttemptLimiter {
    limit: u32,
    window: Duration,
    windows: Mutex<HashMap<String, (Instant, u32)>>,
}

impl AttemptLimiter {
    pub fn new(limit: u32, window: Duration) -> AttemptLimiter {
        AttemptLimiter {
            limit,
            window,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts an attempt by `key`; `Err(seconds)` when over the limit, with the wait until the window ends.
    pub fn attempt(&self, key: &str) -> Result<(), u64> {
        let mut windows = self.windows.lock();
        let now = Instant::now();
        if windows.len() > 100_000 {
            windows.retain(|_, (start, _)| now.duration_since(*start) < self.window);
        }
        let entry = windows.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        if entry.1 >= self.limit {
            return Err((self.window.saturating_sub(now.duration_since(entry.0)))
                .as_secs()
                .max(1));
        }
        entry.1 += 1;
        Ok(())
    }
}

/// The address a login attempt is counted against: the peer, or behind `trusted_proxy_hops` proxies the
/// `X-Forwarded-For` entry that many places from the right. The left-most entries are the client's own
/// words, so trusting them would let a fresh value per request escape the limit.
pub fn client_address(req: &actix_web::HttpRequest, config: &crate::config::AuthConfig) -> String {
    let peer = req
        .peer_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    if !config.trust_forwarded_for || config.trusted_proxy_hops == 0 {
        return peer;
    }
    let entries: Vec<String> = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    let hops = config.trusted_proxy_hops as usize;
    if entries.len() < hops {
        return peer;
    }
    entries[entries.len() - hops].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_after_the_limit_within_the_window() {
        let limiter = AttemptLimiter::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            assert!(limiter.attempt("1.2.3.4").is_ok());
        }
        let wait = limiter.attempt("1.2.3.4").unwrap_err();
        assert!((1..=60).contains(&wait));
        assert!(
            limiter.attempt("5.6.7.8").is_ok(),
            "other addresses are counted apart"
        );
    }

    #[test]
    fn a_new_window_starts_fresh() {
        let limiter = AttemptLimiter::new(1, Duration::from_millis(20));
        assert!(limiter.attempt("a").is_ok());
        assert!(limiter.attempt("a").is_err());
        std::thread::sleep(Duration::from_millis(30));
        assert!(limiter.attempt("a").is_ok());
    }
}
