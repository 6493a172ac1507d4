//! A call's metadata (docs/analytics-api.md, Metadata): its configured fields' rows, and on the call's
//! row its `last_modified`, its whole metadata as the last change left it with whether the metadata
//! worker has written that into the stored transcript yet (a change is pending until it has), and the
//! worker's claim. The batch forms serve the metadata requests committed together (`analytics_core::metadata`).

use common::db::{Handle, StoreError};
use common::dispatch;

use super::sql::Statements;
use super::{CallMetadata, FieldOf, FieldValue, MetadataChange, MetadataField};

/// The call with its pending metadata change (`pending` is `None` when its stored transcript is up to
/// date); inside a transaction, locked until it ends.
pub async fn get_call_metadata<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
) -> Result<Option<CallMetadata>, StoreError> {
    Ok(get_calls_metadata(h, &[id]).await?.into_iter().next())
}

/// The call with its metadata as its last change left it (`metadata`), for a reader: nothing is locked.
pub async fn read_call_metadata<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
) -> Result<Option<CallMetadata>, StoreError> {
    dispatch!(h, Statements::read_call_metadata(id))
}

/// Sets the call's `last_modified` and its pending metadata change (`None`: the stored transcript holds
/// it).
pub async fn set_call_metadata<'a>(
    h: impl Into<Handle<'a>>,
    id: &str,
    last_modified: &str,
    pending: Option<&str>,
) -> Result<(), StoreError> {
    dispatch!(h, Statements::set_call_metadata(id, last_modified, pending))
}

/// The call's configured metadata fields, by name.
pub async fn metadata<'a>(
    h: impl Into<Handle<'a>>,
    call: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    Ok(calls_metadata(h, &[call])
        .await?
        .into_iter()
        .map(|f| (f.field, f.value))
        .collect())
}

/// The configured fields of the calls, by call and field.
pub async fn calls_metadata<'a>(
    h: impl Into<Handle<'a>>,
    calls: &[&str],
) -> Result<Vec<MetadataField>, StoreError> {
    if calls.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::calls_metadata(calls))
}

/// The calls among `ids` that exist, each with its pending change, in the order of their ids; inside a
/// transaction locked until it ends, in that order.
pub async fn get_calls_metadata<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[&str],
) -> Result<Vec<CallMetadata>, StoreError> {
    dispatch!(h, Statements::get_calls_metadata(ids))
}

/// Claims the calls among `ids` for `writer` until `until` (milliseconds since the epoch) where no other
/// writer's claim holds at `now` (`writer`'s own is renewed); with `pending_only`, only calls with a
/// pending change. The calls claimed, in the order of their ids.
pub async fn claim_calls<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[&str],
    writer: &str,
    now: i64,
    until: i64,
    pending_only: bool,
) -> Result<Vec<CallMetadata>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(
        h,
        Statements::claim_calls(ids, writer, now, until, pending_only)
    )
}

/// Lets go of the calls among `ids` that `writer` holds; with `written`, their pending change is in the
/// stored transcript now.
pub async fn release_calls<'a>(
    h: impl Into<Handle<'a>>,
    writer: &str,
    ids: &[&str],
    written: bool,
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::release_calls(writer, ids, written))
}

/// Sets configured fields; each call's field at most once.
pub async fn set_metadata_rows<'a>(
    h: impl Into<Handle<'a>>,
    rows: &[FieldValue<'_>],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::set_metadata_rows(rows))
}

/// Removes fields; the calls that had one of them.
pub async fn remove_metadata_rows<'a>(
    h: impl Into<Handle<'a>>,
    rows: &[FieldOf<'_>],
) -> Result<Vec<String>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(h, Statements::remove_metadata_rows(rows))
}

/// Removes the rows of `fields` of every call of the folder `scope` names (a field its `custom_meta` no
/// longer configures); the calls that had one, each once.
pub async fn remove_folder_fields<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    organization: &str,
    folder: &str,
    fields: &[String],
) -> Result<Vec<String>, StoreError> {
    if fields.is_empty() {
        return Ok(Vec::new());
    }
    dispatch!(
        h,
        Statements::remove_folder_fields(company, organization, folder, fields)
    )
}

/// Sets calls' `last_modified`, whole metadata (a change pending for the stored transcript) and reindex
/// mark; each call at most once.
pub async fn set_calls_metadata<'a>(
    h: impl Into<Handle<'a>>,
    rows: &[MetadataChange<'_>],
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::set_calls_metadata(rows))
}

/// Clears the calls' reindex mark: the reindex worker has taken their messages and reads them next, so
/// a change committed from now on needs a message of its own.
pub async fn clear_reindex_due<'a>(
    h: impl Into<Handle<'a>>,
    ids: &[&str],
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    dispatch!(h, Statements::clear_reindex_due(ids))
}
