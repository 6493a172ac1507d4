//! Result callbacks (docs/transcription.md, Callbacks): the post of a finished or failed transcription to
//! the address its request named. A delivery is a message on the bus (topic `analytics.callback`),
//! published in the transaction that records the result, so none is lost and none announces a result
//! that was not stored. Each attempt is signed with the company's secrets as they stand (`sign`,
//! `secrets`), goes only to addresses the operator allows
//! (`guard`, checked on the addresses actually connected to), and is retried with doubling waits until
//! the receiver answers 2xx or the request's attempt limit is reached (the transcription crate's
//! `jobs::callback`). Each receiver takes a few posts at once at most (`destinations`), so a slow one
//! cannot hold every delivery slot. No HTTP server and no bus here: this crate is what a delivery needs.

pub mod body;
pub mod destinations;
pub mod guard;
pub mod secrets;
pub mod sign;

use std::time::Duration;

use common::bus::RetryPolicy;
use common::secrets::SecretKey;

use destinations::Destinations;
use guard::{AddressPolicy, GuardedResolver};

/// What every delivery attempt needs: the guarded HTTP client, the schedule, and the server key that
/// companies' callback secrets derive from.
pub struct Deliverer {
    pub client: reqwest::Client,
    pub policy: AddressPolicy,
    /// The waits between attempts (the bus's doubling schedule) and the attempts a request gets when
    /// neither it nor its folder says.
    pub schedule: RetryPolicy,
    server_key: Option<SecretKey>,
    /// How long a replaced secret goes on signing beside the new one.
    pub secret_overlap: Duration,
    /// The posts under way per receiver, at most `callback_posts_per_receiver` each.
    pub destinations: Destinations,
    /// How long a delivery waits when its receiver has all the posts it may: one post's timeout, the
    /// longest a slot there stays taken.
    pub busy_wait: Duration,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The operator's settings of callbacks (the analytics service's `callback_*` keys).
#[derive(Debug, Clone)]
pub struct CallbackSettings {
    pub allow_loopback: bool,
    pub allow_private: bool,
    /// How long one attempt may take, connection to last byte of the answer's head.
    pub timeout_ms: u64,
    /// Attempts of a callback when neither the request nor its folder says.
    pub attempts: u32,
    /// The wait before the second attempt, doubling after each failure up to `max_wait_ms`.
    pub first_retry_ms: u64,
    pub max_wait_ms: u64,
    /// How long a replaced secret goes on signing beside the new one.
    pub secret_overlap_s: u64,
    /// Posts under way at once to one receiver.
    pub posts_per_receiver: usize,
}

impl CallbackSettings {
    /// The addresses callbacks may go to.
    pub fn addresses(&self) -> AddressPolicy {
        AddressPolicy {
            allow_loopback: self.allow_loopback,
            allow_private: self.allow_private,
        }
    }
}

impl Deliverer {
    /// The deliverer of `config`; `server_key` derives the companies' secrets.
    pub fn new(config: &CallbackSettings, server_key: Option<SecretKey>) -> Deliverer {
        let policy = config.addresses();
        let client = reqwest::Client::builder()
            .dns_resolver(GuardedResolver::shared(policy))
            // A redirect could lead anywhere, the guard's ranges included: a 3xx is a failed attempt.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect on the service's behalf to addresses the guard never saw.
            .no_proxy()
            .timeout(Duration::from_millis(config.timeout_ms))
            .user_agent(concat!("speech-callbacks/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a client with a resolver and no TLS options builds");
        Deliverer {
            client,
            policy,
            schedule: RetryPolicy {
                max_attempts: config.attempts,
                first_wait: Duration::from_millis(config.first_retry_ms),
                max_wait: Duration::from_millis(config.max_wait_ms),
            },
            server_key,
            secret_overlap: Duration::from_secs(config.secret_overlap_s),
            destinations: Destinations::new(config.posts_per_receiver),
            busy_wait: Duration::from_millis(config.timeout_ms),
        }
    }

    /// The server key companies' secrets derive from; none when the service runs without one (it
    /// refuses to start without one, so only a misbuilt test sees this).
    pub fn server_key(&self) -> Option<&SecretKey> {
        self.server_key.as_ref()
    }
}
