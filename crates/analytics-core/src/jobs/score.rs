//! Topic `analytics.score`: scores calls by the applications of their folder and counts them in the daily
//! rollups (docs/scoring.md, The pipeline). The costly part (reading the transcript, figures, matching)
//! happens outside any transaction; a batch is then written in one transaction that locks its calls and
//! writes a call only if the applications it was scored with are still the folder's current ones, and
//! only if its stored scores came from other ones. So a message may arrive late or twice, and a call is
//! never counted twice. A call whose write fails fails only its own messages: a failed batch is written
//! again by halves.

use std::collections::BTreeMap;
use std::sync::Arc;

use common::bus::Delivery;
use common::db::Tx;
use messages::v1::ScoreCall;
use tracing::Instrument;

use common::halves::by_halves;

use crate::error::AnalyticsError;
use crate::state::AnalyticsState;
use crate::worker::{outcomes_by_call, settle, settle_all, JobError};
use analytics_store::rollups::{
    AgentDayDelta, AgentDayKey, CategoryDayDelta, CategoryDayKey, RollupChanges,
};
use analytics_store::{
    self as store, AppRow, CallFactsRow, CallRow, CallScoreRow, FolderKey, STATUS_OK,
};
use scoring::apps::CompiledApp;
use scoring::model::utterances::{turns, StoredCall};
use scoring::model::{AppScores, CallFacts, FolderSettings};

/// Messages handled per transaction.
pub const BATCH: usize = 100;

/// A folder's applications as they are now, compiled, and the fingerprint naming them.
#[derive(Clone)]
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
        let mut apps = Vec::with_capacity(rows.len());
        for row in &rows {
            apps.push(state.apps.compiled(&state.matching, row).await?);
        }
        Ok(Some(FolderApps {
            apps,
            fingerprint: fingerprint(&rows),
        }))
    }
}

/// `name@revision` of each application, joined by ','.
pub fn fingerprint(rows: &[AppRow]) -> String {
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

/// The folder a score message names: the calls of one folder are read and scored together.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct NamedFolder {
    company: String,
    organization: String,
    folder: String,
}

/// Scores a batch of messages and writes them in one transaction, then settles each message. The calls
/// of a folder are read in one statement, and their stored figures in one more.
pub async fn process(state: Arc<AnalyticsState>, batch: Vec<Delivery>) {
    let state = &state;
    let mut by_folder: BTreeMap<NamedFolder, Vec<(Delivery, String)>> = BTreeMap::new();
    for delivery in batch {
        match <ScoreCall as messages::Message>::decode(&*delivery.message.body) {
            Ok(m) => by_folder
                .entry(NamedFolder {
                    company: m.company,
                    organization: m.organization,
                    folder: m.folder,
                })
                .or_default()
                .push((delivery, m.call_id)),
            Err(e) => {
                let poison = Err(JobError::Poison(e.to_string()));
                settle(state, messages::topics::SCORE, delivery, poison).await;
            }
        }
    }
    let mut ready: BTreeMap<String, Vec<Delivery>> = BTreeMap::new();
    let mut scored = Vec::new();
    for (named, deliveries) in by_folder {
        let outcomes = async {
            let Some(apps) =
                FolderApps::load(state, &named.company, &named.organization, &named.folder)
                    .await
                    .map_err(JobError::retry)?
            else {
                // The folder is gone or being deleted: nothing to score.
                return Ok(Vec::new());
            };
            let ids: Vec<&str> = deliveries.iter().map(|(_, id)| id.as_str()).collect();
            let calls = store::get_calls(&state.db, &ids)
                .await
                .map_err(JobError::retry)?;
            let traces: Traces = deliveries
                .iter()
                .map(|(d, id)| (id.as_str(), d.message.traceparent.as_deref()))
                .collect();
            score_rows(state, calls, &apps, &traces).await
        }
        .await;
        let mut outcomes: BTreeMap<String, Result<Option<Scored>, JobError>> = match outcomes {
            Ok(outcomes) => outcomes.into_iter().collect(),
            Err(e) => {
                for (delivery, _) in deliveries {
                    settle(state, messages::topics::SCORE, delivery, Err(e.clone())).await;
                }
                continue;
            }
        };
        for (delivery, call_id) in deliveries {
            // A call named twice is scored once; a call not read is gone.
            match outcomes.remove(&call_id).unwrap_or(Ok(None)) {
                Ok(call) => {
                    scored.extend(call);
                    ready.entry(call_id).or_default().push(delivery);
                }
                Err(e) => settle(state, messages::topics::SCORE, delivery, Err(e)).await,
            }
        }
    }
    // A call the transaction cannot take fails its own messages only: the batch is written again by
    // halves without it.
    let failed = by_halves(&scored, |_| true, |part| write(state, part))
        .await
        .unwrap_or_default();
    let failed = failed
        .into_iter()
        .map(|(s, e)| (s.call.id.clone(), JobError::retry(e)));
    let settled = outcomes_by_call(ready, failed);
    settle_all(state, messages::topics::SCORE, settled).await;
}

/// Scores a call whose row was read already; None when it is already scored by `apps`.
pub async fn score_row(
    state: &AnalyticsState,
    call: CallRow,
    apps: &FolderApps,
) -> Result<Option<Scored>, JobError> {
    let outcome = score_rows(state, vec![call], apps, &Traces::new())
        .await?
        .pop();
    outcome.map_or(Ok(None), |(_, scored)| scored)
}

/// The trace context of the message that named each call, by call.
pub type Traces<'a> = BTreeMap<&'a str, Option<&'a str>>;

/// Scores calls whose rows were read already (a rescore job reads them by pages), their transcripts
/// read all at once, each in the trace of the message that named it (`traces`); each call's outcome,
/// None for one already scored by `apps` (its stored figures say so, read for all in one statement). An
/// error of that statement is the whole batch's; one of a transcript its call's.
pub async fn score_rows(
    state: &AnalyticsState,
    calls: Vec<CallRow>,
    apps: &FolderApps,
    traces: &Traces<'_>,
) -> Result<Vec<(String, Result<Option<Scored>, JobError>)>, JobError> {
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    let done: std::collections::HashSet<String> = store::calls_facts(&state.db, &ids)
        .await
        .map_err(JobError::retry)?
        .into_iter()
        .filter(|f| f.scoring == apps.fingerprint)
        .map(|f| f.call_id)
        .collect();
    let read = calls.into_iter().map(|call| {
        let done = done.contains(&call.id);
        let span = common::telemetry::job_span(
            messages::topics::SCORE,
            traces.get(call.id.as_str()).copied().flatten(),
        );
        async move {
            if done {
                return (call.id, Ok(None));
            }
            let transcript = state.objects.get(&call.transcript_key()).await;
            let (id, company, apps) = (call.id.clone(), call.company.clone(), apps.clone());
            // Matching is CPU work: on the matching pool, in turn with other companies' calls.
            let outcome = state
                .matching
                .run(&company, move || scored(call, transcript, &apps))
                .await
                .map_err(JobError::retry)
                .and_then(|scored| scored);
            (id, outcome.map(Some))
        }
        .instrument(span)
    });
    Ok(futures_util::future::join_all(read).await)
}

/// The call scored by `apps` from its stored transcript.
fn scored(
    call: CallRow,
    transcript: Result<Option<Vec<u8>>, common::objects::ObjectError>,
    apps: &FolderApps,
) -> Result<Scored, JobError> {
    let transcript = transcript
        .map_err(JobError::retry)?
        .ok_or_else(|| JobError::Retry(format!("the transcript of call {} is missing", call.id)))?;
    let stored = StoredCall::read(&transcript).map_err(|e| JobError::Poison(e.to_string()))?;
    let facts = scoring::figures::facts(&stored);
    // The turns are the matcher's own copy of the text: none for a folder without applications.
    let scores = if apps.apps.is_empty() {
        Vec::new()
    } else {
        let turns = turns(stored.utterances);
        apps.apps
            .iter()
            .filter_map(|app| match app.score(&turns, facts.duration) {
                Ok(scores) => Some(scores),
                Err(over) => {
                    // Not scored by this application; /appmatches says why.
                    tracing::warn!(call = %call.id, app = %app.app, error = %over,
                        "a call went over its scan budget");
                    None
                }
            })
            .collect()
    };
    Ok(Scored {
        call,
        facts,
        fingerprint: apps.fingerprint.clone(),
        scores,
    })
}

/// Writes scored calls in one transaction: per call (in id order, so concurrent writers lock in the same
/// order), only if it still exists, its folder's applications are still the ones it was scored with, and
/// its stored scores came from other ones; its old scores are taken out of the rollups and its new ones
/// added, its figures the first time. Each kind of read and write is one statement for the batch.
pub async fn write(state: &AnalyticsState, scored: &[Scored]) -> Result<(), AnalyticsError> {
    if scored.is_empty() {
        return Ok(());
    }
    let mut scored: Vec<&Scored> = scored.iter().collect();
    scored.sort_by(|a, b| a.call.id.cmp(&b.call.id));
    scored.dedup_by(|a, b| a.call.id == b.call.id);
    let mut tx = state.db.begin().await?;
    let ids: Vec<&str> = scored.iter().map(|s| s.call.id.as_str()).collect();
    let existing: std::collections::HashSet<String> = store::get_calls(&mut tx, &ids)
        .await?
        .into_iter()
        .map(|row| row.id)
        .collect();
    // Read after the calls are locked, in the transaction: an application or folder change committed
    // from here on publishes a rescore job, which waits for these locks and then finds what this
    // transaction wrote outdated.
    let mut current: BTreeMap<FolderKey, Option<String>> = BTreeMap::new();
    for s in scored.iter().filter(|s| existing.contains(&s.call.id)) {
        let key = s.call.folder_key();
        if let std::collections::btree_map::Entry::Vacant(entry) = current.entry(key) {
            // Only the rows: compiling is no work for a transaction holding locks.
            let rows = folder_app_rows(
                state,
                Some(&mut tx),
                key.company,
                key.organization,
                key.folder,
            )
            .await?;
            entry.insert(rows.map(|rows| fingerprint(&rows)));
        }
    }
    let eligible: Vec<&Scored> = scored
        .iter()
        .copied()
        .filter(|s| {
            existing.contains(&s.call.id)
                && current[&s.call.folder_key()].as_deref() == Some(s.fingerprint.as_str())
        })
        .collect();
    let eligible_ids: Vec<&str> = eligible.iter().map(|s| s.call.id.as_str()).collect();
    let stored: BTreeMap<String, CallFactsRow> = store::calls_facts(&mut tx, &eligible_ids)
        .await?
        .into_iter()
        .map(|row| (row.call_id.clone(), row))
        .collect();
    let rescored: Vec<&str> = eligible
        .iter()
        .filter(|s| {
            stored
                .get(&s.call.id)
                .is_some_and(|f| f.scoring != s.fingerprint)
        })
        .map(|s| s.call.id.as_str())
        .collect();
    let mut old_scores: BTreeMap<String, Vec<CallScoreRow>> = BTreeMap::new();
    for row in store::calls_scores(&mut tx, &rescored).await? {
        old_scores.entry(row.call_id.clone()).or_default().push(row);
    }

    let mut changes = RollupChanges::default();
    let mut new_facts = Vec::new();
    let mut refingerprinted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut replaced = Vec::new();
    let mut rows = Vec::new();
    for s in eligible {
        let facts = match stored.get(&s.call.id) {
            Some(row) if row.scoring == s.fingerprint => continue,
            Some(row) => {
                let facts = row.facts();
                for old in old_scores.get(&s.call.id).into_iter().flatten() {
                    let delta = CategoryDayDelta::of(&old.score(), &facts, -1);
                    changes.category(
                        category_key(&s.call, &facts, &old.app, &old.category),
                        &delta,
                    );
                }
                refingerprinted
                    .entry(s.fingerprint.as_str())
                    .or_default()
                    .push(s.call.id.as_str());
                facts
            }
            None => {
                new_facts.push(CallFactsRow::new(&s.call, &s.facts, s.fingerprint.clone()));
                changes.agent(
                    agent_key(&s.call, &s.facts),
                    &AgentDayDelta::of(&s.facts, 1),
                );
                s.facts.clone()
            }
        };
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
        replaced.push(s.call.id.as_str());
    }
    store::insert_calls_facts(&mut tx, &new_facts).await?;
    for (fingerprint, ids) in &refingerprinted {
        store::set_scoring(&mut tx, ids, fingerprint).await?;
    }
    store::replace_calls_scores(&mut tx, &replaced, &rows).await?;
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
