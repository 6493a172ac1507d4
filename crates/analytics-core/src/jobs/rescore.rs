//! Topic `analytics.rescore`: brings the scores of a folder's calls up to date after an application or
//! the folder's `apps` changed (docs/scoring.md, The pipeline). A job for an application fans out into
//! one job per folder of the company that uses it, published in one transaction; a job for a folder walks
//! its calls in id order, a page at a time, each page scored and written like a batch of the score
//! worker. Redelivered after a crash, a job walks again: calls already up to date are skipped without
//! reading their transcripts, and none is counted twice.

use std::sync::Arc;

use messages::v1::RescoreScope;

use super::score::{self, FolderApps};
use crate::state::AnalyticsState;
use crate::worker::JobError;
use analytics_store::{self as store, STATUS_OK};
use common::halves::by_halves;
use scoring::model::FolderSettings;

/// Calls read and written per transaction.
pub const PAGE: i64 = 500;

pub async fn handle(state: Arc<AnalyticsState>, body: Vec<u8>) -> Result<(), JobError> {
    let job = <RescoreScope as messages::Message>::decode(body.as_slice())
        .map_err(|e| JobError::Poison(e.to_string()))?;
    if !job.folder.is_empty() {
        return rescore_folder(&state, &job).await;
    }
    if job.app.is_empty() {
        return Err(JobError::Poison(
            "a rescore job names a folder or an application".into(),
        ));
    }
    let folders = store::company_folders(&state.db, &job.company)
        .await
        .map_err(JobError::retry)?;
    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    for folder in folders.iter().filter(|f| f.status == STATUS_OK) {
        let settings: FolderSettings =
            serde_json::from_str(&folder.settings).map_err(JobError::retry)?;
        if settings.apps.contains(&job.app) {
            crate::outbox::rescore_folder(
                &state,
                &mut tx,
                &folder.company,
                &folder.organization,
                &folder.folder,
            )
            .await
            .map_err(JobError::retry)?;
        }
    }
    tx.commit().await.map_err(JobError::retry)
}

/// Walks the folder's calls. A call that cannot be scored or written is passed over, so the rest of the
/// folder is rescored; the job then ends with the first such call's error (retried, its walk finding only
/// what is still not up to date), or as a dead letter when one of them can never be scored.
async fn rescore_folder(state: &AnalyticsState, job: &RescoreScope) -> Result<(), JobError> {
    let mut after = String::new();
    let mut failed: Vec<(String, JobError)> = Vec::new();
    loop {
        // The applications are read again for every page: when one changes meanwhile, the rest of the
        // walk uses the new one (and the job its change published finds less to do).
        let Some(apps) = FolderApps::load(state, &job.company, &job.organization, &job.folder)
            .await
            .map_err(JobError::retry)?
        else {
            return Ok(());
        };
        let calls = store::calls_after(
            &state.db,
            &job.company,
            &job.organization,
            &job.folder,
            &after,
            PAGE,
        )
        .await
        .map_err(JobError::retry)?;
        let Some(last) = calls.last() else {
            break;
        };
        after = last.id.clone();
        let mut scored = Vec::new();
        for (id, outcome) in score::score_rows(state, calls, &apps, &score::Traces::new()).await? {
            match outcome {
                Ok(call) => scored.extend(call),
                Err(e) => failed.push((id, e)),
            }
        }
        let unwritten = by_halves(&scored, |_| true, |part| score::write(state, part))
            .await
            .unwrap_or_default();
        failed.extend(
            unwritten
                .into_iter()
                .map(|(s, e)| (s.call.id.clone(), JobError::retry(e))),
        );
    }
    match failed.into_iter().next() {
        None => Ok(()),
        Some((call, e)) => {
            tracing::warn!(call, error = %e, "a call of a rescored folder could not be scored");
            Err(e)
        }
    }
}
