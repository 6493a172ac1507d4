//! Topic `analytics.delete`: removes a company, an organization or a folder with everything in it. The
//! job works in batches of calls: it waits for the metadata requests under way on them, then removes their
//! stored objects, their search documents, then their rows in one transaction; then the search documents
//! and rows of the scope itself. Each step can run again, so a worker killed midway leaves the message
//! unacknowledged, and the next delivery resumes with the calls that are left; nothing is reported gone
//! while anything of it remains. `GET /config` reports `deleting (NN%)` from the calls left.

use std::sync::Arc;

use common::search::Scope;
use messages::v1::DeleteScope;

use super::metadata;
use crate::state::AnalyticsState;
use crate::worker::JobError;
use analytics_store as store;

/// Calls removed per batch (and per transaction).
pub const BATCH: i64 = 100;

pub async fn handle(state: Arc<AnalyticsState>, body: Vec<u8>) -> Result<(), JobError> {
    let job = <DeleteScope as messages::Message>::decode(body.as_slice())
        .map_err(|e| JobError::Poison(e.to_string()))?;
    if job.company.is_empty() || (job.organization.is_empty() && !job.folder.is_empty()) {
        return Err(JobError::Poison(format!("not a scope: {job:?}")));
    }
    let scope = Scope {
        company: job.company,
        organization: Some(job.organization).filter(|o| !o.is_empty()),
        folder: Some(job.folder).filter(|f| !f.is_empty()),
    };
    delete_scope(&state, &scope).await
}

pub async fn delete_scope(state: &AnalyticsState, scope: &Scope) -> Result<(), JobError> {
    while delete_requests(state, scope).await? > 0 {}
    while delete_batch(state, scope).await? > 0 {}
    // Documents a late reindex may have written, then the scope's own rows.
    state
        .search
        .delete_scope(scope)
        .await
        .map_err(JobError::retry)?;
    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    store::delete_scope_rows(&mut tx, scope)
        .await
        .map_err(JobError::retry)?;
    tx.commit().await.map_err(JobError::retry)?;
    Ok(())
}

/// Removes up to `BATCH` transcription requests of the scope (a company's own, without a folder,
/// included when the scope is the company): their recordings and results, then their rows.
async fn delete_requests(state: &AnalyticsState, scope: &Scope) -> Result<usize, JobError> {
    let (organization, folder) = (
        scope.organization.as_deref().unwrap_or(""),
        scope.folder.as_deref().unwrap_or(""),
    );
    let requests =
        store::requests::request_keys(&state.db, &scope.company, organization, folder, BATCH)
            .await
            .map_err(JobError::retry)?;
    for request in &requests {
        for key in [&request.audio_key, &request.result_key]
            .into_iter()
            .filter(|k| !k.is_empty())
        {
            state.objects.delete(key).await.map_err(JobError::retry)?;
        }
    }
    let ids: Vec<String> = requests.into_iter().map(|r| r.id).collect();
    store::requests::delete_requests(&state.db, &ids)
        .await
        .map_err(JobError::retry)?;
    Ok(ids.len())
}

/// Removes up to `BATCH` calls of the scope: objects, search documents, then rows. Answers how many.
pub async fn delete_batch(state: &AnalyticsState, scope: &Scope) -> Result<usize, JobError> {
    let calls = store::calls_in(&state.db, scope, BATCH)
        .await
        .map_err(JobError::retry)?;
    if calls.is_empty() {
        return Ok(0);
    }
    let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
    // Metadata writes under way on the calls end first, and none starts after: the deletion takes their
    // transcripts' claims for good. Taking them also waits for the metadata requests under way on the
    // calls (they hold the calls' rows); every later one finds the folder being deleted.
    let claimed: Vec<&str> = ids.iter().map(String::as_str).collect();
    metadata::claim_for_deletion(state, &claimed).await?;
    for call in &calls {
        delete_objects(state, &call.object_prefix()).await?;
    }
    state.search.delete(&ids).await.map_err(JobError::retry)?;
    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    store::delete_calls(&mut tx, &ids)
        .await
        .map_err(JobError::retry)?;
    tx.commit().await.map_err(JobError::retry)?;
    Ok(ids.len())
}

async fn delete_objects(state: &AnalyticsState, prefix: &str) -> Result<(), JobError> {
    loop {
        let keys = state
            .objects
            .list(prefix, None, 1000)
            .await
            .map_err(JobError::retry)?;
        if keys.is_empty() {
            return Ok(());
        }
        for key in keys {
            state.objects.delete(&key).await.map_err(JobError::retry)?;
        }
    }
}
