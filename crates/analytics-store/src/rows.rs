//! The rows of the analytics tables, as both databases return them.

use scoring::model::FolderSettings;

use super::rollups::CategoryDayDelta;

/// Whether a company, organization or folder is usable or being deleted.
pub const STATUS_OK: &str = "OK";
pub const STATUS_DELETING: &str = "deleting";

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CompanyRow {
    pub company: String,
    pub name: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct OrganizationRow {
    pub company: String,
    pub organization: String,
    pub timezone: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

/// A call as a metadata change finds it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CallMetadata {
    #[sqlx(flatten)]
    pub row: CallRow,
    /// The whole metadata not yet written into the stored transcript (`None`: the transcript holds it).
    #[sqlx(rename = "pending_metadata")]
    pub pending: Option<String>,
    /// The whole metadata as the call's last change left it, written or not (`None`: never changed,
    /// only the stored transcript holds it).
    #[sqlx(rename = "metadata_json")]
    pub metadata: Option<String>,
    /// A reindex message for the call is on its way, not yet taken by the reindex worker.
    pub reindex_due: bool,
    /// Who holds the call's transcript for a write: a metadata worker, or a deletion
    /// (`jobs::metadata`); the claim may have run out.
    #[sqlx(rename = "metadata_writer")]
    pub writer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FolderRow {
    pub company: String,
    pub organization: String,
    pub folder: String,
    /// The folder's settings as JSON (`model::FolderSettings`).
    pub settings: String,
    pub created: String,
    pub status: String,
    pub delete_total: i64,
}

impl FolderRow {
    /// The folder's settings, provided it can take changes (it is not being deleted).
    pub fn usable_settings(&self) -> Result<FolderSettings, Unusable> {
        if self.status != STATUS_OK {
            return Err(Unusable::Deleting(format!(
                "folder {} is being deleted",
                self.folder
            )));
        }
        serde_json::from_str(&self.settings).map_err(|e| Unusable::Unreadable(e.to_string()))
    }
}

/// Why a folder's settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// The folder is being deleted: it takes no change (an API answers 409).
    #[error("{0}")]
    Deleting(String),
    /// The stored settings do not read back: the store's fault, not the caller's.
    #[error("the folder's stored settings do not read back: {0}")]
    Unreadable(String),
}

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CallRow {
    pub id: String,
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub request_id: String,
    pub datetime: String,
    pub last_modified: String,
    pub filename: String,
    pub agent_id: String,
    pub audio_seconds: f64,
}

/// A folder by its company, organization and name: what calls are grouped by where each of a batch's
/// folders is read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FolderKey<'a> {
    pub company: &'a str,
    pub organization: &'a str,
    pub folder: &'a str,
}

impl CallRow {
    /// Where the call's transcript is kept in the object store.
    pub fn transcript_key(&self) -> String {
        format!("{}transcript.json", self.object_prefix())
    }

    /// The folder the call is in.
    pub fn folder_key(&self) -> FolderKey<'_> {
        FolderKey {
            company: &self.company,
            organization: &self.organization,
            folder: &self.folder,
        }
    }

    /// The prefix of every object of the call (its transcript, its audio).
    pub fn object_prefix(&self) -> String {
        format!(
            "{}/{}/{}/{}/",
            self.company, self.organization, self.folder, self.id
        )
    }
}

/// A scored call's figures (`model::CallFacts`) and the fingerprint of its scores (docs/scoring.md).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CallFactsRow {
    pub call_id: String,
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub day: String,
    pub datetime: String,
    pub agent_id: String,
    pub duration: f64,
    pub silence: f64,
    pub words: i64,
    pub agent_talk: f64,
    pub client_talk: f64,
    pub agent_emotion: Option<String>,
    pub client_emotion: Option<String>,
    pub scoring: String,
}

impl CallFactsRow {
    pub fn new(call: &CallRow, facts: &scoring::model::CallFacts, scoring: String) -> CallFactsRow {
        CallFactsRow {
            call_id: call.id.clone(),
            company: call.company.clone(),
            organization: call.organization.clone(),
            folder: call.folder.clone(),
            day: facts.day.clone(),
            datetime: facts.datetime.clone(),
            agent_id: facts.agent_id.clone(),
            duration: facts.duration,
            silence: facts.silence,
            words: facts.words,
            agent_talk: facts.agent_talk,
            client_talk: facts.client_talk,
            agent_emotion: facts.agent_emotion.map(|e| e.as_str().to_string()),
            client_emotion: facts.client_emotion.map(|e| e.as_str().to_string()),
            scoring,
        }
    }

    pub fn facts(&self) -> scoring::model::CallFacts {
        use scoring::model::Emotion;
        scoring::model::CallFacts {
            day: self.day.clone(),
            datetime: self.datetime.clone(),
            agent_id: self.agent_id.clone(),
            duration: self.duration,
            silence: self.silence,
            words: self.words,
            agent_talk: self.agent_talk,
            client_talk: self.client_talk,
            agent_emotion: self.agent_emotion.as_deref().and_then(Emotion::parse),
            client_emotion: self.client_emotion.as_deref().and_then(Emotion::parse),
        }
    }
}

/// A call's score in one category of one application ('' for the application as a whole).
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CallScoreRow {
    pub call_id: String,
    pub app: String,
    pub category: String,
    pub score: i64,
    /// 0 or 1.
    pub hit: i64,
    pub coverage: f64,
}

impl CallScoreRow {
    pub fn score(&self) -> scoring::model::CategoryScore {
        scoring::model::CategoryScore {
            category: self.category.clone(),
            score: u32::try_from(self.score).unwrap_or(0),
            hit: self.hit != 0,
            coverage: self.coverage,
        }
    }
}

/// A stored application.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct AppRow {
    pub company: String,
    pub name: String,
    /// The normalized JSON of the PUT body (`apps::Definition::normalized`).
    pub definition: String,
    /// The first 16 hex digits of the SHA-256 of `definition`.
    pub revision: String,
    /// When it was last changed, UTC, RFC 3339 with milliseconds.
    pub updated: String,
}

/// A company's rotated secret: its generation (1 after the first rotation), when it was rotated (RFC
/// 3339, UTC), and whether the generation before goes on signing for the overlap: after a rotation it
/// does, after a deletion of the company it does not.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SecretGeneration {
    pub generation: i64,
    pub rotated: String,
    pub previous_signs: bool,
}

/// A stored request.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct RequestRow {
    pub id: String,
    pub company: String,
    pub organization: String,
    pub folder: String,
    pub call_id: String,
    pub filename: String,
    pub output: String,
    pub diarize: bool,
    pub metadata: String,
    pub audio_key: String,
    pub result_key: String,
    pub state: String,
    pub error: String,
    pub audio_seconds: f64,
    pub callback_url: String,
    pub callback_state: String,
    pub callback_attempts: i64,
    pub callback_max_attempts: i64,
    pub callback_error: String,
    pub created: String,
    pub updated: String,
}

/// How a request ended, written with its result in one statement.
#[derive(Debug, Clone)]
pub struct Outcome<'a> {
    pub state: &'a str,
    pub error: &'a str,
    pub result_key: &'a str,
    pub audio_seconds: f64,
    pub callback_state: &'a str,
    pub updated: &'a str,
}

/// The sums of one agent's calls on one local day (YYYY-MM-DD), in one folder or over the folders of an
/// organization.
#[derive(Debug, Clone, Default, PartialEq, sqlx::FromRow)]
pub struct AgentDayRow {
    pub day: String,
    pub agent_id: String,
    pub calls: i64,
    pub duration: f64,
    pub silence: f64,
    pub words: i64,
    pub agent_talk: f64,
    pub client_talk: f64,
    pub agent_positive: i64,
    pub agent_negative: i64,
    pub agent_improving: i64,
    pub agent_worsening: i64,
    pub client_positive: i64,
    pub client_negative: i64,
    pub client_improving: i64,
    pub client_worsening: i64,
}

/// The sums of one agent's calls on one day in one category of an application ('' for the application),
/// as the query over a cut day's calls gives them (`category_day_cut`).
#[derive(Debug, Clone, Default, PartialEq, sqlx::FromRow)]
pub struct CategoryDayRow {
    pub day: String,
    pub agent_id: String,
    pub category: String,
    #[sqlx(flatten)]
    pub sums: CategoryDayDelta,
}

/// A configured metadata field of a call, as `calls_metadata` reads it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MetadataField {
    pub call_id: String,
    pub field: String,
    pub value: String,
}

/// A folder's calls, and how many of them are scored with a given fingerprint (`scoring_progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoringProgress {
    pub calls: i64,
    pub scored: i64,
}

/// A configured field of a call to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldValue<'a> {
    pub call_id: &'a str,
    pub field: &'a str,
    pub value: &'a str,
}

/// A call's metadata after a change: its `last_modified`, its whole metadata (pending for the stored
/// transcript) and whether its search document must be rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataChange<'a> {
    pub call_id: &'a str,
    pub last_modified: &'a str,
    pub metadata: &'a str,
    pub reindex_due: bool,
}

/// A configured field of a call to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOf<'a> {
    pub call_id: &'a str,
    pub field: &'a str,
}

/// What a transcription request leaves in the object store, by the request's id (`request_keys`); an
/// empty key when there is none.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RequestKeys {
    pub id: String,
    pub audio_key: String,
    pub result_key: String,
}

/// A packed category rollup row of one agent's day in a folder (scorecards.rs), as the statistics read it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ScorecardDayRow {
    pub day: String,
    pub agent_id: String,
    pub sums: Vec<u8>,
}
