//! The search index port: full-text search over the calls of a folder (transcript text and the folder's
//! configured metadata fields), scoped to a company, organization and folder. Adapters: Meilisearch (the
//! production adapter, `MeiliIndex`) and an embedded index on local disk (`EmbeddedIndex`); both pass
//! `tests/search_contract.rs`.
//!
//! Writes are visible to searches once they return, so a worker can acknowledge its bus message right
//! after the write. Documents are identified by the call id; writing a document again replaces it whole.
//!
//! What a search means, the same on both adapters:
//! - `q` is plain words, never a query language: quotes, `AND`, `-`, `*`, `field:value` and brackets are
//!   words or separators like any other, so no text can make a search fail. Every word must be found
//!   (AND), in the text or in a metadata value, ignoring case and accents; only the first
//!   `MAX_QUERY_WORDS` count. A `q` without a letter or digit is the empty query. Meilisearch also
//!   forgives typos and takes the last word as a prefix; the embedded index matches whole words only.
//! - A metadata filter compares the whole value ignoring case and surrounding spaces (as Meilisearch
//!   does); a call without the field does not match. Scopes compare exactly, case included.
//! - `limit` over `MAX_LIMIT` is refused (`SearchError::Invalid`), not clamped: a caller asking for more
//!   than a page can hold has a bug worth seeing. No hit past position `MAX_REACHABLE` is returned
//!   (Meilisearch's own bound); `total` still counts them.
//! - Inputs the indexes cannot take are refused before either sees them (`check_document`,
//!   `check_query`): ids other than 1 to 511 bytes of `A-Z a-z 0-9 - _` (Meilisearch's rule), datetimes
//!   not `YYYY-MM-DDTHH:MM:SS` or with a year outside 1900..=9999, empty scope names, a folder scope without its organization, and field names
//!   that are empty, longer than `MAX_FIELD_NAME_LEN`, hold control characters or empty `.`-separated
//!   parts (Meilisearch reads `.` as nesting). Deleting an id that could never be indexed is a no-op.
//! - Snippets are HTML: the text is escaped (`&`, `<`, `>`, `"`, `'`) and only the `<em>` marks are tags.

mod check;
mod each;
mod embedded;
mod meili;
mod port;
mod snippet;

pub use check::{
    check_datetime, check_document, check_field_name, check_query, check_scope, is_indexable_id,
    MAX_FIELD_NAME_LEN, YEARS,
};
pub use embedded::EmbeddedIndex;
pub use meili::MeiliIndex;
pub use port::{
    Refused, Scope, SearchDocument, SearchError, SearchHit, SearchIndex, SearchPage, SearchQuery,
    MAX_LIMIT, MAX_QUERY_WORDS, MAX_REACHABLE,
};
