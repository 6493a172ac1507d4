//! The process's file descriptors. At start a binary raises its soft limit to the hard one (a service
//! holding thousands of connections needs more than the usual 1024) and says how many servers it runs;
//! each server then keeps its connections within its share of the limit, past what the rest of the
//! process needs (database pools, files, the search index).

use std::sync::OnceLock;

/// Descriptors left to everything but client connections, or a quarter of the limit when that is less
/// (a hard limit of 1024 still leaves 768 for connections).
const OTHER_FILES: u64 = 1024;

/// The connections each server of the process may hold, once `raise` was called.
static SHARE: OnceLock<usize> = OnceLock::new();

/// Raises the soft limit of open files to the hard one and sets each of `servers` servers' share of
/// it; the soft limit now in force.
pub fn raise(servers: usize) -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let limit = getrlimit(Resource::Nofile);
    // `None` is no limit.
    let below_hard = match (limit.current, limit.maximum) {
        (Some(soft), Some(hard)) => soft < hard,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let mut current = limit.current;
    if below_hard {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => current = limit.maximum,
            Err(e) => tracing::warn!(error = %e, "the limit of open files could not be raised"),
        }
    }
    let soft = current.unwrap_or(u64::MAX);
    let share = soft.saturating_sub(other_files(soft)) / servers.max(1) as u64;
    let _ = SHARE.set(usize::try_from(share).unwrap_or(usize::MAX).max(1));
    tracing::info!(open_files = soft, per_server = share, "limit of open files");
    soft
}

fn other_files(soft: u64) -> u64 {
    OTHER_FILES.min(soft / 4)
}

/// The connections a server may hold: `wanted`, or its share of the descriptors when that is less
/// (with a warning, as the configuration asks for more than the process can open).
pub fn connections_within(wanted: usize, name: &str) -> usize {
    match SHARE.get() {
        Some(&share) if share < wanted => {
            tracing::warn!(
                server = name,
                wanted,
                share,
                "max_connections and reserved_connections ask for more connections than the \
                 limit of open files allows; serving fewer"
            );
            share
        }
        _ => wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one_and_shared_between_servers() {
        let soft = raise(4);
        let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(now.current, now.maximum);
        assert_eq!(Some(soft), now.current.or(Some(u64::MAX)));
        let share = usize::try_from((soft - other_files(soft)) / 4).unwrap_or(usize::MAX);
        assert_eq!(connections_within(usize::MAX, "test"), share);
        assert_eq!(connections_within(10, "test"), 10);
        assert_eq!(
            other_files(1024),
            256,
            "a small limit keeps most for connections"
        );
        assert_eq!(other_files(1 << 20), OTHER_FILES);
    }
}
