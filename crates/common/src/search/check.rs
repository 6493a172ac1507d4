//! The inputs both search adapters can take, checked before either sees them, so that a document or a
//! query one index would take and the other refuse (or read differently) is refused by both alike.

use chrono::{Datelike, NaiveDateTime};

use super::port::{Scope, SearchDocument, SearchError, SearchQuery, MAX_LIMIT};

/// The longest metadata field name, in bytes: 64 characters of up to 4 bytes each, so that a limit
/// counted in characters (the analytics API's) never meets this one first.
pub const MAX_FIELD_NAME_LEN: usize = 256;

/// The years a call's `datetime` may fall in: four digits, so that the text sorts in time order, and
/// none before telephones were common enough to record.
pub const YEARS: std::ops::RangeInclusive<i32> = 1900..=9999;

/// Meilisearch's rule for document ids.
const MAX_ID_LEN: usize = 511;

/// Whether `id` can name a document: 1 to 511 bytes of `A-Z a-z 0-9 - _`.
pub fn is_indexable_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Refuses a document either index could not take, or would take differently.
pub fn check_document(document: &SearchDocument) -> Result<(), SearchError> {
    if !is_indexable_id(&document.id) {
        return Err(invalid(format!(
            "document id {:?}: 1 to {MAX_ID_LEN} bytes of A-Z, a-z, 0-9, '-' and '_'",
            document.id
        )));
    }
    for (what, name) in [
        ("company", &document.company),
        ("organization", &document.organization),
        ("folder", &document.folder),
    ] {
        if name.is_empty() {
            return Err(invalid(format!("document {}: empty {what}", document.id)));
        }
    }
    check_datetime(&document.datetime)
        .map_err(|e| invalid(format!("document {}: {e}", document.id)))?;
    document
        .fields
        .keys()
        .try_for_each(|name| check_field_name(name))
}

/// Refuses a call time the indexes could not sort: anything but `YYYY-MM-DDTHH:MM:SS` with a year in
/// [`YEARS`]. The analytics API refuses such a time at upload with this same check, so no stored call
/// has a document the index would refuse.
pub fn check_datetime(datetime: &str) -> Result<(), String> {
    // The adapters sort the text itself, so only this one layout sorts in time order.
    let parsed = (datetime.len() == 19)
        .then(|| NaiveDateTime::parse_from_str(datetime, "%Y-%m-%dT%H:%M:%S").ok())
        .flatten();
    match parsed {
        None => Err(format!("datetime {datetime:?} is not YYYY-MM-DDTHH:MM:SS")),
        Some(t) if !YEARS.contains(&t.year()) => Err(format!(
            "datetime {datetime:?}: the year must be from {} to {}",
            YEARS.start(),
            YEARS.end()
        )),
        Some(_) => Ok(()),
    }
}

/// Refuses a query outside the port's bounds.
pub fn check_query(query: &SearchQuery) -> Result<(), SearchError> {
    check_scope(&query.scope)?;
    if query.limit > MAX_LIMIT {
        return Err(invalid(format!(
            "limit {} is over the most a search returns, {MAX_LIMIT}",
            query.limit
        )));
    }
    query
        .filter
        .iter()
        .try_for_each(|(name, _)| check_field_name(name))
}

/// Refuses a scope that names nothing, or a folder without the organization it belongs to.
pub fn check_scope(scope: &Scope) -> Result<(), SearchError> {
    if scope.company.is_empty()
        || scope.organization.as_deref() == Some("")
        || scope.folder.as_deref() == Some("")
    {
        return Err(invalid("scope with an empty name".to_string()));
    }
    if scope.folder.is_some() && scope.organization.is_none() {
        // Folders are named within their organization: alone, a name could mean a folder of each.
        return Err(invalid("a folder scope names its organization".to_string()));
    }
    Ok(())
}

/// Meilisearch reads `.` in a name as nesting, which only works between non-empty parts; control
/// characters are the embedded index's path separators. The analytics API checks metadata field names
/// with it too, so no field it accepts is one the index would refuse.
pub fn check_field_name(name: &str) -> Result<(), SearchError> {
    let valid = !name.is_empty()
        && name.len() <= MAX_FIELD_NAME_LEN
        && !name.chars().any(char::is_control)
        && name.split('.').all(|part| !part.is_empty());
    if valid {
        Ok(())
    } else {
        Err(invalid(format!(
            "field name {name:?}: 1 to {MAX_FIELD_NAME_LEN} bytes, no control characters, no empty part between dots"
        )))
    }
}

fn invalid(message: String) -> SearchError {
    SearchError::Invalid(message)
}
