//! Per-account request limits (docs/admin-api.md: 70 requests per second, 10,000 per day) that hold
//! across replicas.
//!
//! Each replica counts the requests it admits per account in fixed windows (the current second, the
//! current UTC day). Every `flush` interval (200 ms by default) it adds what it counted to shared counters
//! in the database (`admin_rate_counters`, one row per account and window, `count = count + delta`) and
//! reads back the totals, which include every replica's flushed requests. It also writes a heartbeat, from
//! which it learns how many replicas (`N`) are alive.
//!
//! A request is admitted when the known total plus what this replica counted that no total read back
//! confirms yet is below the limit, **and** that unconfirmed count is below its share of what is left:
//! `ceil((limit - known total) / (4 * N))` with several replicas (all of it with one). When its share is
//! used up but the limit is not, it synchronizes that account at once (one round trip: add its count,
//! read the total; concurrent requests wait for it) and decides again. Hence, in any window:
//! - one replica: exact (never more than the limit);
//! - N replicas: at most `limit + (N - 1) * ceil(limit / (4 * N))`. The replica that wrote the shared
//!   counter last knows the true flushed total and stays within the limit; each other replica can add
//!   at most its unsynchronized share. With the defaults and two replicas that is 70 + 9 per second and
//!   10,000 + 1,250 per day in the very worst case; in practice the per-second limit and the 200 ms
//!   flush keep the daily overshoot to a few requests.
//!
//! Refused requests are not counted. Accounts listed in the configuration are not limited.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::db::now_millis;
use parking_lot::Mutex;

use common::db::Database;

use crate::storage;

const DAY_MS: i64 = 86_400_000;

/// With several replicas, each may admit `1 / (SHARE_DIVISOR * N)` of what is left between two
/// synchronizations: smaller shares mean less overshoot and more round trips.
pub const SHARE_DIVISOR: i64 = 4;

/// Which limit refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    Second,
    Day,
}

/// What the rate-limit headers report about one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowState {
    pub limit: i64,
    pub remaining: i64,
    /// Seconds until the window ends.
    pub reset_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub outcome: Result<(), Exceeded>,
    /// `None` when the window has no limit (or the account is exempt).
    pub second: Option<WindowState>,
    pub day: Option<WindowState>,
}

#[derive(Debug, Default, Clone)]
struct Counter {
    window: i64,
    /// Whether `global` was read from the shared counter during this window.
    known: bool,
    /// The shared total at the last flush (every replica's flushed requests).
    global: i64,
    /// Counted here and being added to the shared counter right now.
    inflight: i64,
    /// Counted here and not yet flushed.
    pending: i64,
}

impl Counter {
    fn roll(&mut self, window: i64) {
        if self.window != window {
            *self = Counter {
                window,
                ..Counter::default()
            };
        }
    }

    fn used(&self) -> i64 {
        self.global + self.inflight + self.pending
    }

    /// Whether this replica must synchronize before admitting another request.
    fn needs_sync(&self, limit: i64, replicas: i64) -> bool {
        if limit == 0 {
            return false;
        }
        // Everything counted here but not yet confirmed by a total read back counts against the share.
        let left = (limit - self.global).max(0);
        let share = if replicas > 1 {
            let parts = SHARE_DIVISOR * replicas;
            (left + parts - 1) / parts
        } else {
            left
        };
        self.inflight + self.pending >= share.max(1)
    }
}

struct Account {
    second: Counter,
    day: Counter,
    last_used: Instant,
    /// Serializes synchronizations of this account: requests that need one wait for the one under way.
    sync: Arc<tokio::sync::Mutex<()>>,
    /// Completed synchronizations, so a waiter can tell that someone else just did one.
    generation: u64,
}

impl Account {
    fn new() -> Account {
        Account {
            second: Counter::default(),
            day: Counter::default(),
            last_used: Instant::now(),
            sync: Arc::new(tokio::sync::Mutex::new(())),
            generation: 0,
        }
    }
}

pub struct RateLimiter {
    per_second: i64,
    per_day: i64,
    exempt: HashSet<String>,
    db: Database,
    replica_id: String,
    flush_every: Duration,
    replicas: AtomicI64,
    accounts: Mutex<HashMap<String, Account>>,
}

enum Step {
    Done(Decision),
    /// Synchronize (unless the generation moved on meanwhile), then decide again.
    Sync(u64, Arc<tokio::sync::Mutex<()>>),
}

/// How many times a request may wait for a synchronization before it is refused for this second.
const MAX_SYNC_ROUNDS: usize = 50;

impl RateLimiter {
    pub fn new(
        per_second: u32,
        per_day: u32,
        exempt: &[String],
        db: Database,
        flush_every: Duration,
    ) -> RateLimiter {
        RateLimiter {
            per_second: per_second as i64,
            per_day: per_day as i64,
            exempt: exempt.iter().cloned().collect(),
            db,
            replica_id: uuid::Uuid::new_v4().simple().to_string(),
            flush_every,
            replicas: AtomicI64::new(1),
            accounts: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `<company>/<username>` is exempt from the limits.
    pub fn is_exempt(&self, company: &str, username: Option<&str>) -> bool {
        username.is_some_and(|u| self.exempt.contains(&format!("{company}/{u}")))
    }

    /// Counts a request of `account` if the limits allow it.
    pub async fn check(&self, account: &str) -> Decision {
        if self.per_second == 0 && self.per_day == 0 {
            return Decision {
                outcome: Ok(()),
                second: None,
                day: None,
            };
        }
        for _ in 0..MAX_SYNC_ROUNDS {
            match self.step(account) {
                Step::Done(decision) => return decision,
                Step::Sync(generation, lock) => {
                    let _one_at_a_time = lock.lock().await;
                    let current = self.accounts.lock().get(account).map(|a| a.generation);
                    if current != Some(generation) {
                        continue;
                    }
                    if let Err(e) = self.flush_account(account).await {
                        // The shared counters are unreachable: decide on what this replica knows.
                        tracing::warn!(error = %e, "rate counters could not be synchronized");
                        return self.step_local(account);
                    }
                }
            }
        }
        // Concurrent requests used up the share again while we synchronized: refuse for this second.
        let mut decision = self.step_local(account);
        if decision.outcome.is_ok() {
            self.uncount(account);
            decision.outcome = Err(Exceeded::Second);
        }
        decision
    }

    fn step(&self, account: &str) -> Step {
        let replicas = self.replicas.load(Ordering::Relaxed).max(1);
        let (sec, day, _) = windows(now_millis());
        let mut accounts = self.accounts.lock();
        let acc = accounts
            .entry(account.to_string())
            .or_insert_with(Account::new);
        acc.second.roll(sec);
        acc.day.roll(day);
        if let Some(refused) = self.refusal(acc) {
            return Step::Done(refused);
        }
        let day_unknown = self.per_day > 0 && !acc.day.known;
        if day_unknown
            || acc.second.needs_sync(self.per_second, replicas)
            || acc.day.needs_sync(self.per_day, replicas)
        {
            return Step::Sync(acc.generation, acc.sync.clone());
        }
        Step::Done(self.admit(acc))
    }

    /// Decides on local knowledge only (used when the shared counters cannot be reached).
    fn step_local(&self, account: &str) -> Decision {
        let (sec, day, _) = windows(now_millis());
        let mut accounts = self.accounts.lock();
        let acc = accounts
            .entry(account.to_string())
            .or_insert_with(Account::new);
        acc.second.roll(sec);
        acc.day.roll(day);
        match self.refusal(acc) {
            Some(refused) => refused,
            None => self.admit(acc),
        }
    }

    fn uncount(&self, account: &str) {
        if let Some(acc) = self.accounts.lock().get_mut(account) {
            acc.second.pending = (acc.second.pending - 1).max(0);
            acc.day.pending = (acc.day.pending - 1).max(0);
        }
    }

    fn refusal(&self, acc: &Account) -> Option<Decision> {
        let exceeded = if self.per_second > 0 && acc.second.used() >= self.per_second {
            Some(Exceeded::Second)
        } else if self.per_day > 0 && acc.day.used() >= self.per_day {
            Some(Exceeded::Day)
        } else {
            None
        };
        exceeded.map(|e| {
            let mut d = self.report(acc);
            d.outcome = Err(e);
            d
        })
    }

    fn admit(&self, acc: &mut Account) -> Decision {
        acc.second.pending += 1;
        acc.day.pending += 1;
        acc.last_used = Instant::now();
        self.report(acc)
    }

    fn report(&self, acc: &Account) -> Decision {
        let (_, _, to_midnight) = windows(now_millis());
        let state = |limit: i64, c: &Counter, reset_secs: u64| {
            (limit > 0).then(|| WindowState {
                limit,
                remaining: (limit - c.used()).max(0),
                reset_secs,
            })
        };
        Decision {
            outcome: Ok(()),
            second: state(self.per_second, &acc.second, 1),
            day: state(self.per_day, &acc.day, to_midnight),
        }
    }

    /// Adds what this replica counted for `account` to the shared counters and reads the totals back.
    async fn flush_account(&self, account: &str) -> Result<(), common::db::StoreError> {
        let taken = {
            let mut accounts = self.accounts.lock();
            let Some(acc) = accounts.get_mut(account) else {
                return Ok(());
            };
            let take = |c: &mut Counter, limit: i64| {
                let delta = c.pending;
                c.pending = 0;
                if limit > 0 {
                    c.inflight += delta;
                }
                (c.window, delta)
            };
            (
                take(&mut acc.second, self.per_second),
                take(&mut acc.day, self.per_day),
            )
        };
        let ((sec_window, sec_delta), (day_window, day_delta)) = taken;
        let mut result = Ok(());
        for (kind, window, delta, limit) in [
            ("s", sec_window, sec_delta, self.per_second),
            ("d", day_window, day_delta, self.per_day),
        ] {
            if limit == 0 {
                continue;
            }
            let total = storage::add_rate_count(&self.db, account, kind, window, delta).await;
            let mut accounts = self.accounts.lock();
            let Some(acc) = accounts.get_mut(account) else {
                continue;
            };
            let counter = if kind == "s" {
                &mut acc.second
            } else {
                &mut acc.day
            };
            if counter.window != window {
                continue;
            }
            counter.inflight -= delta;
            match total {
                Ok(total) => {
                    counter.global = counter.global.max(total);
                    counter.known = true;
                }
                Err(e) => {
                    // Not flushed: count it again next time.
                    counter.pending += delta;
                    result = Err(e);
                }
            }
        }
        if result.is_ok() {
            if let Some(acc) = self.accounts.lock().get_mut(account) {
                acc.generation += 1;
            }
        }
        result
    }

    /// One round of the background task: heartbeat, then flush every account with unflushed requests.
    pub async fn flush(&self) {
        let now = now_millis();
        let alive_since = now - (self.flush_every.as_millis() as i64 * 5).max(2_000);
        match storage::heartbeat(&self.db, &self.replica_id, now, alive_since).await {
            Ok(n) => self.replicas.store(n.max(1), Ordering::Relaxed),
            Err(e) => tracing::warn!(error = %e, "rate limiter heartbeat failed"),
        }
        let dirty: Vec<String> = self
            .accounts
            .lock()
            .iter()
            .filter(|(_, a)| a.second.pending > 0 || a.day.pending > 0)
            .map(|(k, _)| k.clone())
            .collect();
        for account in dirty {
            if let Err(e) = self.flush_account(&account).await {
                tracing::warn!(error = %e, "rate counters could not be flushed");
            }
        }
    }

    /// Forgets idle accounts and deletes shared state of windows that are over.
    pub async fn purge(&self) {
        let (sec, day, _) = windows(now_millis());
        self.accounts.lock().retain(|_, a| {
            a.second.pending + a.second.inflight + a.day.pending + a.day.inflight > 0
                || a.last_used.elapsed() < Duration::from_secs(600)
        });
        if let Err(e) =
            storage::purge_rate_state(&self.db, sec - 120, day - 2, now_millis() - 3_600_000).await
        {
            tracing::warn!(error = %e, "purging rate counters failed");
        }
    }

    /// Runs the flush and purge loop until the limiter is dropped by every holder but this task.
    pub fn spawn_background(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let every = self.flush_every;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut last_purge = Instant::now();
            loop {
                tick.tick().await;
                let Some(limiter) = weak.upgrade() else {
                    break;
                };
                limiter.flush().await;
                if last_purge.elapsed() > Duration::from_secs(60) {
                    limiter.purge().await;
                    last_purge = Instant::now();
                }
            }
        });
    }
}

/// The current second and day windows, and the seconds until the day ends (UTC midnight).
fn windows(now_ms: i64) -> (i64, i64, u64) {
    let day = now_ms.div_euclid(DAY_MS);
    let to_midnight = ((day + 1) * DAY_MS - now_ms + 999) / 1000;
    (now_ms.div_euclid(1000), day, to_midnight.max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_a_replica_shrinks_with_the_total_and_the_replicas() {
        let c = Counter {
            window: 1,
            known: true,
            global: 40,
            inflight: 0,
            pending: 10,
        };
        assert!(!c.needs_sync(70, 1), "one replica may use all that is left");
        assert!(
            c.needs_sync(70, 3),
            "with three, its share is ceil(30 / 3) = 10"
        );
        assert!(!c.needs_sync(0, 3), "no limit, no synchronization");
    }

    #[test]
    fn windows_are_utc_seconds_and_days() {
        let (sec, day, to_midnight) = windows(DAY_MS * 3 + 1_500);
        assert_eq!((sec, day), ((DAY_MS * 3 + 1_500) / 1000, 3));
        assert_eq!(to_midnight, 86_399);
    }
}
