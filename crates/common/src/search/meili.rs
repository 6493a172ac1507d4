//! The production search adapter: an index of a Meilisearch server, through `meilisearch-sdk`.
//!
//! Meilisearch applies writes asynchronously, as tasks; every write here waits for its task and reports a
//! failed one, so a write is visible once the call returns, as the port says. A task or request the
//! server refuses as invalid is `SearchError::Invalid` (the documents' fault), any other failure
//! `SearchError::Backend`.
//!
//! Each call is one document of the index: its scope, `datetime`, `text`, and its metadata as the nested
//! object `fields`, whose every member is filterable (`fields` is a filterable attribute, which covers
//! `fields.<name>`: a pattern such as `fields.*` is accepted as a setting but, on Meilisearch 1.50, does
//! not make the members filterable). Meilisearch compares filter strings ignoring case and truncates long
//! ones, which would let scopes differing only by case meet, so scopes are filtered through the SHA-256
//! of each name (`company_key`, `organization_key`, `folder_key`), which it compares exactly.
//!
//! Filters are expressions; every attribute name and value in one is quoted and escaped (`quote`), so no
//! value can end its string or add a condition. `q` goes to Meilisearch as plain words: quotes (phrase
//! search) and leading `-` (negation) are removed first, and the matching strategy is `all`.
//!
//! Snippets are Meilisearch's crop of `text` with the matches highlighted by two private-use characters,
//! then escaped for HTML and marked like the embedded index's; the text is indexed without those two
//! characters, so every one in a crop is a mark.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use meilisearch_sdk::client::Client;
use meilisearch_sdk::documents::DocumentDeletionQuery;
use meilisearch_sdk::errors::{Error as MeiliError, ErrorCode, MeilisearchError};
use meilisearch_sdk::indexes::Index;
use meilisearch_sdk::search::{MatchingStrategies, SearchResult, Selectors};
use meilisearch_sdk::settings::{PaginationSetting, Settings};
use meilisearch_sdk::task_info::TaskInfo;
use meilisearch_sdk::tasks::Task;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::check::{check_document, check_query, check_scope, is_indexable_id};
use super::port::{
    has_words, reachable, Scope, SearchDocument, SearchError, SearchHit, SearchIndex, SearchPage,
    SearchQuery, MAX_REACHABLE,
};
use super::snippet::mark;

/// How long a write waits for its task unless told otherwise (`with_task_timeout`).
const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a waiting write asks for its task.
const TASK_POLL: Duration = Duration::from_millis(10);
/// How many requests for a task may fail on the way in one wait before the wait does.
const TASK_RETRIES: u32 = 3;
/// The snippet's length, in words.
const CROP_WORDS: usize = 30;
/// Meilisearch's highlight marks, replaced by `<em>`…`</em>` once the crop is escaped.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';
const OPEN_TAG: &str = "\u{E000}";
const CLOSE_TAG: &str = "\u{E001}";

/// An index of a Meilisearch server. Cheap to clone; clones share the HTTP client.
#[derive(Clone)]
pub struct MeiliIndex {
    client: Client,
    index: Index,
    task_timeout: Duration,
}

/// A call as the Meilisearch index holds it.
#[derive(Serialize)]
struct Stored<'a> {
    id: &'a str,
    company: &'a str,
    organization: &'a str,
    folder: &'a str,
    company_key: String,
    organization_key: String,
    folder_key: String,
    datetime: &'a str,
    text: String,
    fields: &'a BTreeMap<String, String>,
}

/// What a search reads back of a call.
#[derive(Deserialize)]
struct Retrieved {
    id: String,
    folder: String,
    datetime: String,
    #[serde(default)]
    fields: BTreeMap<String, String>,
}

impl MeiliIndex {
    /// Connects to the server at `url` and makes index `index_uid` ready: created when missing (primary
    /// key `id`), its settings (searchable, filterable and sortable attributes, `MAX_REACHABLE`) applied.
    /// Settings that are already in place cost the server nothing. An index that is there is not asked
    /// for again: replicas starting beside each other would leave the server a failed task each
    /// (`index_already_exists`, logged as an error); two that still race to create it both go on.
    pub async fn connect(
        url: &str,
        api_key: Option<&str>,
        index_uid: &str,
    ) -> Result<Self, SearchError> {
        let client = Client::new(url, api_key).map_err(meili_error)?;
        let meili = MeiliIndex {
            index: client.index(index_uid),
            client,
            task_timeout: DEFAULT_TASK_TIMEOUT,
        };
        let exists = match meili.client.get_raw_index(index_uid).await {
            Ok(_) => true,
            Err(MeiliError::Meilisearch(MeilisearchError {
                error_code: ErrorCode::IndexNotFound,
                ..
            })) => false,
            Err(e) => return Err(meili_error(e)),
        };
        if !exists {
            match meili
                .finish(meili.client.create_index(index_uid, Some("id")).await)
                .await
            {
                Ok(())
                | Err(TaskError::Failed(MeilisearchError {
                    error_code: ErrorCode::IndexAlreadyExists,
                    ..
                })) => {}
                Err(e) => return Err(e.into()),
            }
        }
        meili
            .finish(meili.index.set_settings(&settings()).await)
            .await?;
        Ok(meili)
    }

    /// How long each write waits for its task (60 s unless set here) before it reports a failure; the
    /// write may still be applied later.
    pub fn with_task_timeout(mut self, timeout: Duration) -> Self {
        self.task_timeout = timeout;
        self
    }

    /// Waits for the task a request enqueued, and says how it ended. Asking for the task again is safe
    /// (the task goes on whatever is asked), so a request for it that fails on the way, such as on a kept
    /// connection the server has just closed, is made again, up to [`TASK_RETRIES`] times in one wait.
    async fn finish(&self, enqueued: Result<TaskInfo, MeiliError>) -> Result<(), TaskError> {
        let task = enqueued.map_err(|e| TaskError::Request(write_error(e)))?;
        let started = Instant::now();
        let mut failed = 0;
        let done = loop {
            let left = self.task_timeout.saturating_sub(started.elapsed());
            match self
                .client
                .wait_for_task(&task, Some(TASK_POLL), Some(left))
                .await
            {
                Err(MeiliError::HttpError(_)) if failed < TASK_RETRIES => {
                    failed += 1;
                    tokio::time::sleep(TASK_POLL).await;
                }
                waited => break waited.map_err(|e| TaskError::Request(meili_error(e)))?,
            }
        };
        match done {
            Task::Succeeded { .. } => Ok(()),
            Task::Failed { content } => Err(TaskError::Failed(content.error)),
            Task::Enqueued { .. } | Task::Processing { .. } => Err(TaskError::Request(
                SearchError::Backend("task still pending after its wait".to_string()),
            )),
        }
    }
}

/// How a write's task ended badly: the request itself, or the task.
enum TaskError {
    Request(SearchError),
    Failed(MeilisearchError),
}

impl From<TaskError> for SearchError {
    fn from(e: TaskError) -> Self {
        match e {
            TaskError::Request(e) => e,
            TaskError::Failed(e) => refusal(e, |code, message| {
                format!("task failed ({code:?}): {message}")
            }),
        }
    }
}

/// A refusal of the server's: `Invalid` when it is about a document's content (an id or a field it cannot
/// take, too many fields, a payload too large), so that a batch is
/// tried again by halves and fails only the document at fault (`SearchIndex::upsert_each`); `Backend`
/// otherwise: the server's own failure, or an index set up unlike this adapter's (a document without the
/// index's primary key), which no document can mend.
fn refusal(e: MeilisearchError, describe: impl Fn(&ErrorCode, &str) -> String) -> SearchError {
    let message = describe(&e.error_code, &e.error_message);
    let documents_fault = matches!(
        e.error_code,
        ErrorCode::InvalidDocumentId
            | ErrorCode::InvalidDocumentFields
            | ErrorCode::InvalidDocumentGeoField
            | ErrorCode::MaxFieldsLimitExceeded
            | ErrorCode::PayloadTooLarge
    );
    if documents_fault {
        SearchError::Invalid(message)
    } else {
        SearchError::Backend(message)
    }
}

#[async_trait]
impl SearchIndex for MeiliIndex {
    async fn upsert(&self, documents: &[SearchDocument]) -> Result<(), SearchError> {
        documents.iter().try_for_each(check_document)?;
        if documents.is_empty() {
            return Ok(());
        }
        let stored: Vec<Stored> = documents.iter().map(stored).collect();
        Ok(self
            .finish(self.index.add_or_replace(&stored, Some("id")).await)
            .await?)
    }

    async fn delete(&self, ids: &[String]) -> Result<(), SearchError> {
        let ids: Vec<&String> = ids.iter().filter(|id| is_indexable_id(id)).collect();
        if ids.is_empty() {
            return Ok(());
        }
        Ok(self.finish(self.index.delete_documents(&ids).await).await?)
    }

    async fn delete_scope(&self, scope: &Scope) -> Result<(), SearchError> {
        check_scope(scope)?;
        let filter = scope_filter(scope);
        let mut query = DocumentDeletionQuery::new(&self.index);
        query.with_filter(&filter);
        Ok(self
            .finish(self.index.delete_documents_with(&query).await)
            .await?)
    }

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, SearchError> {
        check_query(query)?;
        let mut conditions = vec![scope_filter(&query.scope)];
        for (name, value) in &query.filter {
            conditions.push(condition(&format!("fields.{name}"), value));
        }
        let filter = conditions.join(" AND ");
        let words = has_words(&query.q).then(|| plain_words(&query.q));
        let (offset, limit) = reachable(query.offset, query.limit);

        let mut search = self.index.search();
        search
            .with_filter(&filter)
            .with_offset(offset)
            .with_limit(limit)
            .with_attributes_to_retrieve(Selectors::Some(&["id", "folder", "datetime", "fields"]));
        match &words {
            Some(words) => {
                search
                    .with_query(words)
                    .with_matching_strategy(MatchingStrategies::ALL)
                    .with_attributes_to_crop(Selectors::Some(&[("text", None)]))
                    .with_crop_length(CROP_WORDS)
                    .with_attributes_to_highlight(Selectors::Some(&["text"]))
                    .with_highlight_pre_tag(OPEN_TAG)
                    .with_highlight_post_tag(CLOSE_TAG);
            }
            None => {
                search.with_sort(&["datetime:desc"]);
            }
        }
        let results = search.execute::<Retrieved>().await.map_err(meili_error)?;
        let total = results
            .estimated_total_hits
            .or(results.total_hits)
            .unwrap_or(results.hits.len());
        Ok(SearchPage {
            total: total as u64,
            hits: results.hits.into_iter().map(hit).collect(),
        })
    }

    async fn ready(&self) -> Result<(), SearchError> {
        self.client.health().await.map(drop).map_err(meili_error)
    }
}

fn settings() -> Settings {
    Settings::new()
        .with_searchable_attributes(["text", "fields"])
        .with_filterable_attributes(["company_key", "organization_key", "folder_key", "fields"])
        .with_sortable_attributes(["datetime"])
        .with_pagination(PaginationSetting {
            max_total_hits: MAX_REACHABLE,
        })
}

fn stored(document: &SearchDocument) -> Stored<'_> {
    Stored {
        id: &document.id,
        company: &document.company,
        organization: &document.organization,
        folder: &document.folder,
        company_key: scope_key(&document.company),
        organization_key: scope_key(&document.organization),
        folder_key: scope_key(&document.folder),
        datetime: &document.datetime,
        text: document.text.replace([OPEN, CLOSE], ""),
        fields: &document.fields,
    }
}

/// The exact-comparable form of a scope name: its SHA-256, in lowercase hex.
fn scope_key(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn scope_filter(scope: &Scope) -> String {
    let mut conditions = vec![condition("company_key", &scope_key(&scope.company))];
    if let Some(organization) = &scope.organization {
        conditions.push(condition("organization_key", &scope_key(organization)));
    }
    if let Some(folder) = &scope.folder {
        conditions.push(condition("folder_key", &scope_key(folder)));
    }
    conditions.join(" AND ")
}

/// `attribute = value`, both quoted.
fn condition(attribute: &str, value: &str) -> String {
    format!("{} = {}", quote(attribute), quote(value))
}

/// A double-quoted filter string. Meilisearch's filter parser ends a string at the first `"` not preceded
/// by `\`, then reads `\"` as `"` and `\\` as `\`; escaping every `\` and `"` makes any text one string.
fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        if c == '\\' || c == '"' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// `q` as plain words for Meilisearch: no phrase quotes, no negating `-` at the start of a word.
fn plain_words(q: &str) -> String {
    q.replace('"', " ")
        .split_whitespace()
        .map(|word| word.trim_start_matches('-'))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn hit(result: SearchResult<Retrieved>) -> SearchHit {
    let snippet = snippet(result.formatted_result.as_ref());
    let Retrieved {
        id,
        folder,
        datetime,
        fields,
    } = result.result;
    SearchHit {
        id,
        folder,
        datetime,
        snippet,
        fields,
    }
}

/// The crop of `text` with its marks turned into `<em>`…`</em>`; empty when nothing in it matched.
fn snippet(formatted: Option<&Map<String, Value>>) -> String {
    let Some(crop) = formatted
        .and_then(|formatted| formatted.get("text"))
        .and_then(Value::as_str)
    else {
        return String::new();
    };
    let mut passage = String::with_capacity(crop.len());
    let mut marked = Vec::new();
    let mut open = None;
    for c in crop.chars() {
        match c {
            OPEN => open = Some(passage.len()),
            CLOSE => {
                if let Some(start) = open.take() {
                    marked.push(start..passage.len());
                }
            }
            c => passage.push(c),
        }
    }
    if marked.is_empty() {
        return String::new();
    }
    mark(&passage, &marked)
}

fn meili_error(e: MeiliError) -> SearchError {
    SearchError::Backend(e.to_string())
}

/// A write's request that failed: refused as the documents' fault (a payload too large), or not.
fn write_error(e: MeiliError) -> SearchError {
    match e {
        MeiliError::Meilisearch(e) => refusal(e, |code, message| format!("{code:?}: {message}")),
        e => meili_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::{plain_words, quote, snippet};

    #[test]
    fn quoting_escapes_backslashes_and_quotes() {
        assert_eq!(quote(r#"a "b" \ c\"#), r#""a \"b\" \\ c\\""#);
        assert_eq!(quote(""), r#""""#);
    }

    #[test]
    fn queries_lose_phrases_and_negations() {
        assert_eq!(
            plain_words(r#""refund now" -angry --x - y"#),
            "refund now angry x y"
        );
    }

    #[test]
    fn snippets_turn_marks_into_em_after_escaping() {
        let formatted = serde_json::json!({"text": "…a <b> \u{E000}Refund\u{E001} & more"});
        assert_eq!(
            snippet(formatted.as_object()),
            "…a &lt;b&gt; <em>Refund</em> &amp; more"
        );
        let unmarked = serde_json::json!({"text": "nothing matched here"});
        assert_eq!(snippet(unmarked.as_object()), "");
        assert_eq!(snippet(None), "");
    }
}
