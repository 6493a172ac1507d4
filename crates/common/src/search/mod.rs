//! The search index port: full-text search over the calls of a folder (transcript text and the folder's
//! configured metadata fields), scoped to a company, organization and folder. Adapters: Meilisearch (the
//! production adapter) and an embedded index on local disk; both pass `tests/search_contract.rs`.
//!
//! Writes are visible to searches once they return, so a worker can acknowledge its bus message right
//! after the write. Documents are identified by the call id; writing a document again replaces it whole.

use std::collections::BTreeMap;

use async_trait::async_trait;

/// The most hits one search returns.
pub const MAX_LIMIT: usize = 100;

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
    /// At most `MAX_LIMIT`.
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

#[async_trait]
pub trait SearchIndex: Send + Sync {
    /// Adds the documents, replacing any with the same id.
    async fn upsert(&self, documents: &[SearchDocument]) -> Result<(), SearchError>;

    /// Removes the documents with these ids; ids that are not there are not an error.
    async fn delete(&self, ids: &[String]) -> Result<(), SearchError>;

    /// Removes every document of the scope (a company, an organization, a folder).
    async fn delete_scope(&self, scope: &Scope) -> Result<(), SearchError>;

    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, SearchError>;

    /// Whether the index can be used (for `/readyz`).
    async fn ready(&self) -> Result<(), SearchError>;
}
