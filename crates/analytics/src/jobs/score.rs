//! Topic `analytics.score`: scores calls by the applications of their folder and counts them in the daily
//! rollups (docs/scoring.md, The pipeline). The costly part (reading the transcript, figures, matching)
//! happens outside any transaction; a batch is then written in one transaction that locks its calls and
//! writes a call only if the applications it was scored with are still the folder's current ones, and
//! only if its stored scores came from other ones. So a message may arrive late or twice, and a call is
//! never counted twice.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::bus::Delivery;
use common::db::Tx;
use messages::v1::ScoreCall;
use tracing::Instrument;

use super::{settle, settle_together, JobError};
use crate::apps::CompiledApp;
use crate::error::AnalyticsError;
use crate::model::utterances::{turns, StoredCall};
use crate::model::{AppScores, CallFacts, FolderSettings};
use crate::state::AnalyticsState;
use crate::store::rollups::{
    AgentDayDelta, AgentDayKey, CategoryDayDelta, CategoryDayKey, RollupChanges,
};
use crate::store::{self, AppRow, CallFactsRow, CallRow, CallScoreRow, STATUS_OK};

/// Messages handled per transaction.
pub const BATCH: usize = 100;

/// A folder's applications as they are now, compiled, and the fingerprint naming them.
pub struct FolderApps {
    pub apps: Vec<Arc<CompiledApp>>,
    /// `name@revision` of each application that exists, by name, joined by ','.
    pub fingerprint: String,
}

impl FolderApps {
    /// The folder's applications, compiled; None when the folder is gone or being deleted.
    pub async fn load(
        state: &AnalyticsState,
        company: &str,
        organization: &str,
        folder: &str,
    ) -> Result<Option<FolderApps>, AnalyticsError> {
        let Some(rows) = folder_app_rows(state, None, company, organization, folder).await? else {
            return Ok(None);
        };
        let apps = rows
            .iter()
            .map(|row| state.apps.compiled(row))
            .collect::<Result<_, _>>()?;
        Ok(Some(FolderApps {
            apps,
            fingerprint: fingerprint(&rows),
        }))
    }
}

/// `name@revision` of each application, joined by ','.
fn fingerprint(rows: &[AppRow]) -> String {
    rows.iter()
        .map(|a| format!("{}@{}", a.name, a.revision))
        .collect::<Vec<_>>()
        .join(",")
}

/// The rows of the folder's applications that exist (its `apps`, each once, by name); None when the
/// folder is gone or being deleted. Read inside `tx` when given: a transaction that holds locks must not
/// wait for a second connection of the pool, which the requests waiting for those locks may all hold.
async fn folder_app_rows(
    state: &AnalyticsState,
    mut tx: Option<&mut Tx>,
    company: &str,
    organization: &str,
    folder: &str,
) -> Result<Option<Vec<AppRow>>, AnalyticsError> {
    let row = match tx.as_deref_mut() {
        Some(tx) => store::peek_folder(tx, company, organization, folder).await?,
        None => store::peek_folder(&state.db, company, organization, folder).await?,
    };
    let Some(row) = row.filter(|r| r.status == STATUS_OK) else {
        return Ok(None);
    };
    let settings: FolderSettings =
        serde_json::from_str(&row.settings).map_err(AnalyticsError::internal)?;
    Ok(Some(app_rows(state, tx, company, &settings.apps).await?))
}

/// The rows of the named applications that exist, each once, by name.
pub async fn app_rows(
    state: &AnalyticsState,
    mut tx: Option<&mut Tx>,
    company: &str,
    names: &[String],
) -> Result<Vec<AppRow>, AnalyticsError> {
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    let mut rows = Vec::new();
    for name in names {
        let app = match tx.as_deref_mut() {
            Some(tx) => store::get_app(tx, company, &name).await?,
            None => store::get_app(&state.db, company, &name).await?,
        };
        rows.extend(app);
    }
    Ok(rows)
}

/// A call scored outside any transaction, to be written by `write`.
pub struct Scored {
    pub call: CallRow,
    pub facts: CallFacts,
    /// The fingerprint of the applications it was scored with.
    pub fingerprint: String,
    pub scores: Vec<AppScores>,
}

/// Scores a batch of messages and writes them in one transaction, then settles each message.
pub async fn process(state: Arc<AnalyticsState>, batch: Vec<Delivery>) {
    let state = &state;
    let mut ready = Vec::new();
    let mut scored = Vec::new();
    let mut folders: BTreeMap<(String, String, String), Option<FolderApps>> = BTreeMap::new();
    for delivery in batch {
        let span = common::telemetry::job_span(
            messages::topics::SCORE,
            delivery.message.traceparent.as_deref(),
        );
        let outcome = async {
            let message = <ScoreCall as messages::Message>::decode(&*delivery.message.body)
                .map_err(|e| JobError::Poison(e.to_string()))?;
            let key = (message.company, message.organization, message.folder);
            if !folders.contains_key(&key) {
                let apps = FolderApps::load(state, &key.0, &key.1, &key.2)
                    .await
                    .map_err(JobError::retry)?;
                folders.insert(key.clone(), apps);
            }
            match &folders[&key] {
                Some(apps) => score(state, &message.call_id, apps).await,
                None => Ok(None),
            }
        }
        .instrument(span)
        .await;
        match outcome {
            Ok(call) => {
                scored.extend(call);
                ready.push(delivery);
            }
            Err(e) => settle(state, messages::topics::SCORE, delivery, Err(e)).await,
        }
    }
    let written = write(state, scored).await;
    settle_together(state, messages::topics::SCORE, ready, &written).await;
}

/// Reads the call and scores it by `apps`; None when it is gone or already scored by them.
pub async fn score(
    state: &AnalyticsState,
    call_id: &str,
    apps: &FolderApps,
) -> Result<Option<Scored>, JobError> {
    let Some(call) = store::get_call(&state.db, call_id)
        .await
        .map_err(JobError::retry)?
    else {
        return Ok(None);
    };
    score_row(state, call, apps).await
}

/// Scores a call whose row was read already (a rescore job reads them by pages).
pub async fn score_row(
    state: &AnalyticsState,
    call: CallRow,
    apps: &FolderApps,
) -> Result<Option<Scored>, JobError> {
    let stored = store::call_facts(&state.db, &call.id)
        .await
        .map_err(JobError::retry)?;
    if stored.is_some_and(|f| f.scoring == apps.fingerprint) {
        return Ok(None);
    }
    let transcript = state
        .objects
        .get(&call.transcript_key())
        .await
        .map_err(JobError::retry)?
        .ok_or_else(|| JobError::Retry(format!("the transcript of call {} is missing", call.id)))?;
    let stored = StoredCall::read(&transcript).map_err(|e| JobError::Poison(e.to_string()))?;
    let facts = crate::figures::facts(&stored);
    let turns = turns(stored.utterances);
    let scores = apps
        .apps
        .iter()
        .map(|app| app.score(&turns, facts.duration))
        .collect();
    Ok(Some(Scored {
        call,
        facts,
        fingerprint: apps.fingerprint.clone(),
        scores,
    }))
}

/// Writes scored calls in one transaction: per call (in id order, so concurrent writers lock in the same
/// order), only if it still exists, its folder's applications are still the ones it was scored with, and
/// its stored scores came from other ones; its old scores are taken out of the rollups and its new ones
/// added, its figures the first time.
pub async fn write(state: &AnalyticsState, mut scored: Vec<Scored>) -> Result<(), AnalyticsError> {
    if scored.is_empty() {
        return Ok(());
    }
    scored.sort_by(|a, b| a.call.id.cmp(&b.call.id));
    let mut tx = state.db.begin().await?;
    let mut locked = Vec::new();
    for s in scored {
        if store::get_call(&mut tx, &s.call.id).await?.is_some() {
            locked.push(s);
        }
    }
    // Read after the calls are locked, in the transaction: an application or folder change committed from here on publishes
    // a rescore job, which waits for these locks and then finds what this transaction wrote outdated.
    let mut current: BTreeMap<(String, String, String), Option<String>> = BTreeMap::new();
    for s in &locked {
        let key = (
            s.call.company.clone(),
            s.call.organization.clone(),
            s.call.folder.clone(),
        );
        if !current.contains_key(&key) {
            // Only the rows: compiling is no work for a transaction holding locks.
            let rows = folder_app_rows(state, Some(&mut tx), &key.0, &key.1, &key.2).await?;
            current.insert(key.clone(), rows.map(|rows| fingerprint(&rows)));
        }
    }
    let mut changes = RollupChanges::default();
    for s in &locked {
        let key = (
            s.call.company.clone(),
            s.call.organization.clone(),
            s.call.folder.clone(),
        );
        if current[&key].as_deref() != Some(s.fingerprint.as_str()) {
            continue;
        }
        let facts = match store::call_facts(&mut tx, &s.call.id).await? {
            Some(row) if row.scoring == s.fingerprint => continue,
            Some(row) => {
                let facts = row.facts();
                for old in store::call_scores(&mut tx, &s.call.id).await? {
                    let delta = CategoryDayDelta::of(&old.score(), &facts, -1);
                    changes.category(
                        category_key(&s.call, &facts, &old.app, &old.category),
                        &delta,
                    );
                }
                store::set_scoring(&mut tx, &s.call.id, &s.fingerprint).await?;
                facts
            }
            None => {
                let row = CallFactsRow::new(&s.call, &s.facts, s.fingerprint.clone());
                store::insert_call_facts(&mut tx, &row).await?;
                changes.agent(
                    agent_key(&s.call, &s.facts),
                    &AgentDayDelta::of(&s.facts, 1),
                );
                s.facts.clone()
            }
        };
        let mut rows = Vec::new();
        for app in &s.scores {
            for category in &app.categories {
                let delta = CategoryDayDelta::of(category, &facts, 1);
                changes.category(
                    category_key(&s.call, &facts, &app.app, &category.category),
                    &delta,
                );
                rows.push(CallScoreRow {
                    call_id: s.call.id.clone(),
                    app: app.app.clone(),
                    category: category.category.clone(),
                    score: i64::from(category.score),
                    hit: i64::from(category.hit),
                    coverage: category.coverage,
                });
            }
        }
        store::replace_call_scores(&mut tx, &s.call.id, &rows).await?;
    }
    store::apply_rollups(&mut tx, &changes).await?;
    tx.commit().await?;
    Ok(())
}

fn agent_key(call: &CallRow, facts: &CallFacts) -> AgentDayKey {
    AgentDayKey {
        company: call.company.clone(),
        organization: call.organization.clone(),
        folder: call.folder.clone(),
        day: facts.day.clone(),
        agent_id: facts.agent_id.clone(),
    }
}

fn category_key(call: &CallRow, facts: &CallFacts, app: &str, category: &str) -> CategoryDayKey {
    CategoryDayKey {
        company: call.company.clone(),
        organization: call.organization.clone(),
        folder: call.folder.clone(),
        app: app.to_string(),
        day: facts.day.clone(),
        agent_id: facts.agent_id.clone(),
        category: category.to_string(),
    }
}
