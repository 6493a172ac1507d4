//! The port itself: what a search index stores, answers and refuses, and the trait both adapters
//! implement (the rules are in the module above).

use std::collections::BTreeMap;

use async_trait::async_trait;

/// The most hits one search returns.
pub const MAX_LIMIT: usize = 100;

/// Hits past this position (`offset` + index in the page) are never returned; `total` still counts them.
pub const MAX_REACHABLE: usize = 1000;

/// The words of `q` that count; later ones are ignored.
pub const MAX_QUERY_WORDS: usize = 10;

/// One call as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDocument {
    /// The call id (`tId`), unique across the index.
    pub id: String,
    pub company: String,
    pub organization: String,
    pub folder: String,
    /// Local time of the call in its organization's time zone, `YYYY-MM-DDTHH:MM:SS`.
    pub datetime: String,
    /// The transcript's text: its utterances in order, one per line.
    pub text: String,
    /// The folder's configured metadata fields that the call has, by name.
    pub fields: BTreeMap<String, String>,
}

/// Where a search or a deletion applies: a company, one of its organizations, or one of their folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub company: String,
    pub organization: Option<String>,
    pub folder: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub scope: Scope,
    /// Words to find in the text or the fields; empty matches every call of the scope.
    pub q: String,
    /// Metadata fields that must equal the given values (all of them).
    pub filter: Vec<(String, String)>,
    pub offset: usize,
    /// At most `MAX_LIMIT`; more is refused.
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub id: String,
    pub folder: String,
    pub datetime: String,
    /// A short passage of the text around the match, the matched words marked `<em>`…`</em>`; empty when
    /// the query is empty or only fields matched.
    pub snippet: String,
    pub fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// Calls that match in all (an estimate past the first thousand).
    pub total: u64,
    /// Newest first (`datetime` descending) when the query is empty; by relevance otherwise.
    pub hits: Vec<SearchHit>,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// A field name or value the index cannot take (the message says which).
    #[error("invalid search input: {0}")]
    Invalid(String),
    #[error("search index: {0}")]
    Backend(String),
}

/// A document a write refused, and why (`SearchIndex::upsert_each`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub id: String,
    pub reason: String,
}

impl Refused {
    pub(super) fn new(id: &str, reason: SearchError) -> Refused {
        Refused {
            id: id.to_string(),
            reason: reason.to_string(),
        }
    }
}

#[async_trait]
pub trait SearchIndex: Send + Sync {
    /// Adds the documents, replacing any with the same id; refuses them all when one cannot be taken.
    async fn upsert(&self, documents: &[SearchDocument]) -> Result<(), SearchError>;

    /// Adds the documents the index takes, as `upsert` would, and answers the others, each with why it
    /// was refused: one document never keeps the rest of a batch out (see `each`). An error is the
    /// index's own failure, for the whole write.
    async fn upsert_each(&self, documents: &[SearchDocument]) -> Result<Vec<Refused>, SearchError> {
        super::each::upsert_each(self, documents).await
    }

    /// Removes the documents with these ids; ids that are not there are not an error.
    async fn delete(&self, ids: &[String]) -> Result<(), SearchError>;

    /// Removes every document of the scope (a company, an organization, a folder).
    async fn delete_scope(&self, scope: &Scope) -> Result<(), SearchError>;

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, SearchError>;

    /// Whether the index can be used (for `/readyz`).
    async fn ready(&self) -> Result<(), SearchError>;
}

/// Whether `q` has a word at all; one without a letter or digit is the empty query.
pub(crate) fn has_words(q: &str) -> bool {
    q.chars().any(char::is_alphanumeric)
}

/// A metadata value as filters compare it: without surrounding spaces, lowercased (Meilisearch's rule).
pub(crate) fn normalize_filter_value(value: &str) -> String {
    value.trim().to_lowercase()
}

/// The part of the page `offset`, `limit` that lies before `MAX_REACHABLE`: (offset, limit).
pub(crate) fn reachable(offset: usize, limit: usize) -> (usize, usize) {
    let offset = offset.min(MAX_REACHABLE);
    (offset, limit.min(MAX_REACHABLE - offset))
}
