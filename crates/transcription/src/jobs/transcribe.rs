//! The transcription worker (topic `analytics.transcribe`, docs/transcription.md): decodes the request's
//! recording, recognizes it, and in one transaction records the result, stores the call of a folder
//! upload (with its reindex and score messages) and queues the callback post. A recording that cannot be
//! transcribed (not audio, too long, unreadable) fails the request at once, reported to the callback
//! as an error post; a failure that may pass (the object store or an external engine unreachable) is
//! retried. A worker killed mid-job loses its lease and the job comes back; a job that comes back for a
//! request already ended changes nothing, so no call is stored twice and no callback is posted twice.

use std::sync::Arc;

use common::bus::Delivery;
use messages::v1::TranscriptionJob;
use messages::Message as _;
use serde_json::{Map, Value};
use speech::assemble::{self, Options};
use speech::audio;
use speech::output::{Output, UnknownFormat};
use speech::SpeechError;

use crate::outbox;
use crate::state::TranscriptionState;
use analytics_core::calls::{self, Target};
use analytics_core::error::AnalyticsError;
use analytics_core::worker::JobError;
use analytics_store::requests::{self, CALLBACK_NONE, CALLBACK_PENDING, DONE, FAILED};
use analytics_store::{self as tables, Outcome, RequestRow};
use callbacks::body;

/// Why a transcription did not produce a transcript.
enum Failure {
    /// The recording itself is the problem: the request fails and says why.
    Final(String),
    /// Something that may work later: the job is retried.
    Passing(String),
}

impl From<AnalyticsError> for Failure {
    fn from(e: AnalyticsError) -> Failure {
        use AnalyticsError::*;
        match e {
            Unavailable(why) | Internal(why) => Failure::Passing(why),
            other => Failure::Final(other.to_string()),
        }
    }
}

/// Attempts of one job before a failure that might pass is taken as final (the request fails with it),
/// so a request never stays `transcribing` behind a dead letter.
pub const MAX_ATTEMPTS: u32 = 5;

/// Handles the deliveries the worker loop received, one at a time, each in its publisher's trace.
pub async fn process(state: Arc<TranscriptionState>, deliveries: Vec<Delivery>) {
    use tracing::Instrument;
    for delivery in deliveries {
        let span = common::telemetry::job_span(
            messages::topics::TRANSCRIBE,
            delivery.message.traceparent.as_deref(),
        );
        let work = handle(&state, &delivery.message.body, delivery.attempt).instrument(span);
        let outcome = keeping_lease(&state, &delivery, work).await;
        analytics_core::worker::settle(&state, messages::topics::TRANSCRIBE, delivery, outcome)
            .await;
    }
}

/// Runs `work` while renewing the delivery's lease every third of it, so a recording that takes
/// longer than a lease to transcribe is not handed to another worker meanwhile.
async fn keeping_lease<F: std::future::Future<Output = Result<(), JobError>>>(
    state: &TranscriptionState,
    delivery: &Delivery,
    work: F,
) -> Result<(), JobError> {
    let every = std::time::Duration::from_millis(state.config.job_lease_ms / 3);
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tokio::pin!(work);
    loop {
        tokio::select! {
            outcome = &mut work => return outcome,
            _ = ticks.tick() => {
                if let Err(e) = state.bus.keep_leased(delivery).await {
                    tracing::warn!(error = %e, "could not renew a transcription job's lease");
                }
            }
        }
    }
}

async fn handle(state: &TranscriptionState, body: &[u8], attempt: u32) -> Result<(), JobError> {
    let job = TranscriptionJob::decode(body)
        .map_err(|e| JobError::Poison(format!("not a TranscriptionJob: {e}")))?;
    let Some(row) = requests::get_request(&state.db, &job.request_id)
        .await
        .map_err(JobError::retry)?
    else {
        // Its company, organization or folder was deleted since: nothing is left to do.
        return Ok(());
    };
    if row.state == DONE || row.state == FAILED {
        return Ok(());
    }
    let Some(starts) = requests::start_request(&state.db, &row.id, &now())
        .await
        .map_err(JobError::retry)?
    else {
        return Ok(());
    };
    if starts > i64::from(MAX_ATTEMPTS) {
        // Every start before this one ended without an outcome: its worker died on the recording (or
        // was stopped each time). Trying again could only take the next worker down with it.
        return fail(
            state,
            &row,
            &format!(
                "the transcription was started {} times and never ended",
                starts - 1
            ),
        )
        .await;
    }
    let started = std::time::Instant::now();
    let outcome = match transcribe(state, &row).await {
        Ok((json, seconds)) => finish(state, &row, json, seconds).await.map(|()| seconds),
        Err(failure) => Err(failure),
    };
    match outcome {
        Ok(seconds) => {
            tracing::info!(request = %row.id, audio_seconds = seconds,
                elapsed_ms = started.elapsed().as_millis() as u64, "transcribed");
            Ok(())
        }
        Err(Failure::Final(why)) => fail(state, &row, &why).await,
        Err(Failure::Passing(why)) if attempt >= MAX_ATTEMPTS => {
            fail(
                state,
                &row,
                &format!("the transcription failed {attempt} times: {why}"),
            )
            .await
        }
        Err(Failure::Passing(why)) => Err(JobError::Retry(why)),
    }
}

fn now() -> String {
    common::time::now_rfc3339()
}

/// The transcript JSON of the request's recording and its length in seconds.
async fn transcribe(
    state: &TranscriptionState,
    row: &RequestRow,
) -> Result<(Map<String, Value>, f64), Failure> {
    let bytes = state
        .objects
        .get(&row.audio_key)
        .await
        .map_err(|e| Failure::Passing(e.to_string()))?
        .ok_or_else(|| Failure::Final("the recording is no longer stored".into()))?;
    let agent_channel = if row.folder.is_empty() {
        0
    } else {
        let folder = tables::get_folder(&state.db, &row.company, &row.organization, &row.folder)
            .await
            .map_err(AnalyticsError::from)?
            .ok_or_else(|| AnalyticsError::scope_not_found(&row.folder))?;
        folder
            .usable_settings()
            .map_err(AnalyticsError::from)?
            .agentchan as u32
    };
    let name = row.filename.clone();
    let max_seconds = state.config.max_audio_seconds;
    // Decoding and resampling are CPU work: off the async workers.
    let decoded = tokio::task::spawn_blocking(move || {
        audio::decode_with_limit(&bytes, Some(&name), max_seconds)
    })
    .await
    .map_err(|e| Failure::Passing(e.to_string()))?
    .map_err(speech_failure)?;
    let options = Options {
        agent_channel,
        diarize: row.diarize,
    };
    let utterances = assemble::transcribe(state.transcriber.as_ref(), &decoded, &options)
        .await
        .map_err(speech_failure)?;
    let json = assemble::transcript_json(&utterances, decoded.seconds, &row.filename);
    Ok((json, decoded.seconds))
}

/// The recording's own faults end the request; the recognizer's may pass (an external engine restarting).
fn speech_failure(e: SpeechError) -> Failure {
    match e {
        SpeechError::Unsupported(_) | SpeechError::Rejected(_) | SpeechError::Corrupt(_) => {
            Failure::Final(e.to_string())
        }
        SpeechError::Engine(_) => Failure::Passing(e.to_string()),
    }
}

/// Records the transcript: the rendered result in the object store, then the request's end, the call of
/// a folder upload and the callback post in one transaction.
async fn finish(
    state: &TranscriptionState,
    row: &RequestRow,
    mut json: Map<String, Value>,
    seconds: f64,
) -> Result<(), Failure> {
    let output: Output = row
        .output
        .parse()
        .map_err(|e: UnknownFormat| Failure::Final(e.to_string()))?;
    let call = if row.folder.is_empty() {
        json.insert("requestid".into(), Value::String(row.id.clone()));
        None
    } else {
        let metadata: Map<String, Value> = serde_json::from_str(&row.metadata).unwrap_or_default();
        let file = serde_json::to_vec(&json).map_err(|e| Failure::Final(e.to_string()))?;
        let target = Target {
            company: &row.company,
            organization: &row.organization,
            folder: &row.folder,
            call_id: &row.call_id,
            request_id: &row.id,
            upload_name: Some(&row.filename),
        };
        let (call, transcript) = calls::prepare(state, &target, &file, Some(metadata)).await?;
        calls::put_transcript(state, &call, &transcript).await?;
        json = serde_json::from_slice(&transcript.stored)
            .map_err(|e| Failure::Final(e.to_string()))?;
        Some((call, transcript))
    };
    let rendered = output.render(&json);
    let result_key = crate::keys::result_key(row, output.extension());
    state
        .objects
        .put(&result_key, rendered.clone())
        .await
        .map_err(|e| Failure::Passing(e.to_string()))?;

    let stored = async {
        let mut tx = state.db.begin().await?;
        let callback = !row.callback_url.is_empty();
        let ended = requests::finish_request(
            &mut tx,
            &row.id,
            &Outcome {
                state: DONE,
                error: "",
                result_key: &result_key,
                audio_seconds: seconds,
                callback_state: if callback {
                    CALLBACK_PENDING
                } else {
                    CALLBACK_NONE
                },
                updated: &now(),
            },
        )
        .await?;
        if !ended {
            // Another delivery of this job finished it first.
            return Ok(());
        }
        if let Some((call, transcript)) = &call {
            calls::insert(state, &mut tx, call, transcript).await?;
        }
        if callback {
            let file_name = format!("{}.{}", row.id, output.extension());
            let post = body::result(&row.id, &file_name, output.content_type(), &rendered);
            outbox::callback(state, &mut tx, row, post).await?;
        }
        tx.commit().await?;
        Ok::<(), AnalyticsError>(())
    }
    .await;
    if let Err(e) = stored {
        if let Some((call, _)) = &call {
            calls::forget_transcript(state, &call.transcript_key()).await;
        }
        return Err(e.into());
    }
    Ok(())
}

/// Ends the request as failed, with the error post to its callback.
async fn fail(state: &TranscriptionState, row: &RequestRow, why: &str) -> Result<(), JobError> {
    tracing::warn!(request = %row.id, reason = %why, "transcription failed");
    let mut tx = state.db.begin().await.map_err(JobError::retry)?;
    let callback = !row.callback_url.is_empty();
    let ended = requests::finish_request(
        &mut tx,
        &row.id,
        &Outcome {
            state: FAILED,
            error: why,
            result_key: "",
            audio_seconds: 0.0,
            callback_state: if callback {
                CALLBACK_PENDING
            } else {
                CALLBACK_NONE
            },
            updated: &now(),
        },
    )
    .await
    .map_err(JobError::retry)?;
    if ended && callback {
        outbox::callback(state, &mut tx, row, body::error(&row.id, why))
            .await
            .map_err(JobError::retry)?;
    }
    tx.commit().await.map_err(JobError::retry)?;
    // A recording that could not be transcribed is of no further use: nothing refers to it.
    if ended {
        if let Err(e) = state.objects.delete(&row.audio_key).await {
            tracing::warn!(error = %e, key = %row.audio_key, "could not remove the recording of a failed request");
        }
    }
    Ok(())
}
