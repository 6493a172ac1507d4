//! Objects that nothing owns. An upload writes its object (a call's transcript, a recording to
//! transcribe) before the transaction that stores its row commits, so a process killed in between leaves
//! the object behind with no call or request to reach or delete it by. A sweep lists the store and
//! removes each such object once it is older than the grace period, which covers the uploads still
//! under way. Only the keys the platform writes are judged — `<company>/<organization>/<folder>/<call>/
//! <file>`, owned by the call or by the transcription request that becomes it, and
//! `<company>/_requests/<request>/<file>`, owned by the request — and an object whose owner cannot be
//! looked up stays.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use analytics_store as store;
use common::objects::Listed;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::AnalyticsError;
use crate::state::AnalyticsState;

/// Objects listed at once: one walk of the local directory, ten S3 listing requests.
const PAGE: usize = 10_000;

/// Owner ids looked up in one round trip.
const LOOKUP: usize = 500;

/// What one sweep saw and did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub listed: usize,
    pub removed: usize,
}

/// Who would own the object under `key`, for the keys the platform writes.
enum Owner<'k> {
    /// A call, by the prefix of its objects (`<company>/<organization>/<folder>/<call>/`), or the
    /// transcription request that becomes it, by the call's id.
    Call { prefix: &'k str, id: &'k str },
    /// A transcription request without a folder, by its id.
    Request(&'k str),
}

impl Owner<'_> {
    fn of(key: &str) -> Option<Owner<'_>> {
        let segments: Vec<&str> = key.split('/').collect();
        match segments.as_slice() {
            [_company, "_requests", request, _file] => Some(Owner::Request(request)),
            [_company, _organization, _folder, call, file] => Some(Owner::Call {
                prefix: &key[..key.len() - file.len()],
                id: call,
            }),
            _ => None,
        }
    }

    fn id(&self) -> &str {
        match self {
            Owner::Call { id, .. } | Owner::Request(id) => id,
        }
    }
}

/// Removes the objects older than `grace` that no call or request owns.
pub async fn sweep(state: &AnalyticsState, grace: Duration) -> Result<Swept, AnalyticsError> {
    let mut swept = Swept::default();
    let mut after: Option<String> = None;
    loop {
        let page = state
            .objects
            .list_written("", after.as_deref(), PAGE)
            .await?;
        let Some(last) = page.last() else { break };
        after = Some(last.key.clone());
        swept.listed += page.len();
        swept.removed += sweep_page(state, &page, grace).await?;
        if page.len() < PAGE {
            break;
        }
    }
    Ok(swept)
}

/// Removes the unowned objects of one page; how many. An object that cannot be removed is left for the
/// next sweep.
async fn sweep_page(
    state: &AnalyticsState,
    page: &[Listed],
    grace: Duration,
) -> Result<usize, AnalyticsError> {
    let now = SystemTime::now();
    let old: Vec<(&str, Owner)> = page
        .iter()
        .filter(|l| now.duration_since(l.written).is_ok_and(|age| age >= grace))
        .filter_map(|l| Some((l.key.as_str(), Owner::of(&l.key)?)))
        .collect();
    let mut ids: Vec<&str> = old.iter().map(|(_, owner)| owner.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut calls: HashSet<String> = HashSet::new();
    let mut requests: HashSet<String> = HashSet::new();
    for chunk in ids.chunks(LOOKUP) {
        let rows = store::get_calls(&state.db, chunk).await?;
        calls.extend(rows.iter().map(|c| c.object_prefix()));
        requests.extend(store::requests::held_by_requests(&state.db, chunk).await?);
    }
    let mut removed = 0;
    for (key, owner) in old {
        let owned = match owner {
            Owner::Call { prefix, id } => calls.contains(prefix) || requests.contains(id),
            Owner::Request(id) => requests.contains(id),
        };
        if owned {
            continue;
        }
        match state.objects.delete(key).await {
            Ok(()) => {
                tracing::info!(%key, "removed an object that no call or request owns");
                removed += 1;
            }
            Err(e) => tracing::warn!(%key, error = %e, "could not remove an unowned object"),
        }
    }
    Ok(removed)
}

/// Sweeps every `every`, removing what is older than `grace`, until `stopped` says so.
pub fn spawn(
    state: Arc<AnalyticsState>,
    every: Duration,
    grace: Duration,
    mut stopped: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = stopped.changed() => return,
            }
            if *stopped.borrow() {
                return;
            }
            match sweep(&state, grace).await {
                Ok(swept) => tracing::info!(
                    listed = swept.listed,
                    removed = swept.removed,
                    "swept the object store"
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "the object store sweep stopped; it runs again later")
                }
            }
        }
    })
}
