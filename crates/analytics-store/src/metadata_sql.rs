//! The statements on a call's metadata, written once for both databases: the configured fields' rows, and the call's
//! `last_modified` with its pending change. The `_rows` and `calls` forms take a whole batch of metadata
//! requests in one statement each (`analytics_core::metadata::batch`), since on SQLite every statement is a
//! hand-off to the database's thread and on PostgreSQL a round trip.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::*;
use crate::sql::{placeholders, tuples, Statements, CALL_COLUMNS, ROWS_PER_STATEMENT};

/// What `CallMetadata` holds besides the call's own columns; `pending_metadata` is the change not yet in
/// the stored transcript.
const METADATA_COLUMNS: &str = "CASE WHEN metadata_written THEN NULL ELSE metadata_json END \
     AS pending_metadata, metadata_json, reindex_due, metadata_writer";

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> Option<&'q str>: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (String,): Reads<D>,
    CallMetadata: Reads<D>,
    MetadataField: Reads<D>,
{
    pub(crate) async fn set_call_metadata(
        c: &mut D::Connection,
        id: &str,
        last_modified: &str,
        pending: Option<&str>,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(
            "UPDATE analytics_calls SET last_modified = $2, metadata_json = COALESCE($3, metadata_json), \
             metadata_written = ($3 IS NULL) WHERE id = $1",
        )
        .bind(id)
        .bind(last_modified)
        .bind(pending)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn calls_metadata(
        c: &mut D::Connection,
        calls: &[&str],
    ) -> Result<Vec<MetadataField>, StoreError> {
        Self::select_in(c, calls, |list| {
            format!(
                "SELECT call_id, field, value FROM analytics_call_metadata WHERE call_id IN ({list}) \
                 ORDER BY call_id, field"
            )
        })
        .await
    }

    /// The call with its metadata as its last change left it, read without locking it.
    pub(crate) async fn read_call_metadata(
        c: &mut D::Connection,
        id: &str,
    ) -> Result<Option<CallMetadata>, StoreError> {
        Ok(sqlx::query_as::<D, CallMetadata>(&format!(
            "SELECT {CALL_COLUMNS}, {METADATA_COLUMNS} FROM analytics_calls WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
    }

    /// The calls among `ids` that exist, each with its pending change, in the order of their ids; inside a
    /// transaction locked until it ends, in that order, so two batches never wait for each other in turn.
    pub(crate) async fn get_calls_metadata(
        c: &mut D::Connection,
        ids: &[&str],
    ) -> Result<Vec<CallMetadata>, StoreError> {
        Self::select_calls(c, ids, &format!("{CALL_COLUMNS}, {METADATA_COLUMNS}")).await
    }

    /// `store::claim_calls`. The rows are locked in the order of their ids, as a metadata batch locks them,
    /// so the two never wait for each other in turn.
    pub(crate) async fn claim_calls(
        c: &mut D::Connection,
        ids: &[&str],
        writer: &str,
        now: i64,
        until: i64,
        pending_only: bool,
    ) -> Result<Vec<CallMetadata>, StoreError> {
        let mut claimed = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let list = placeholders(5, chunk.len());
            let sql = format!(
                "UPDATE analytics_calls SET metadata_writer = $1, metadata_claimed_until = $2 \
                 WHERE id IN (SELECT id FROM analytics_calls WHERE id IN ({list}) \
                 AND (metadata_claimed_until IS NULL OR metadata_claimed_until < $3 OR metadata_writer = $1) \
                 AND (NOT metadata_written OR NOT $4) ORDER BY id{for_update}) \
                 RETURNING {CALL_COLUMNS}, {METADATA_COLUMNS}", for_update = D::FOR_UPDATE);
            let mut query = sqlx::query_as::<D, CallMetadata>(&sql)
                .bind(writer)
                .bind(until)
                .bind(now)
                .bind(pending_only);
            for id in chunk {
                query = query.bind(*id);
            }
            claimed.extend(query.fetch_all(&mut *c).await?);
        }
        claimed.sort_unstable_by(|a, b| a.row.id.cmp(&b.row.id));
        Ok(claimed)
    }

    pub(crate) async fn release_calls(
        c: &mut D::Connection,
        writer: &str,
        ids: &[&str],
        written: bool,
    ) -> Result<(), StoreError> {
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let list = placeholders(3, chunk.len());
            let sql = format!(
                "UPDATE analytics_calls SET metadata_writer = NULL, metadata_claimed_until = NULL, \
                 metadata_written = (metadata_written OR $2) \
                 WHERE metadata_writer = $1 AND id IN ({list})"
            );
            let mut query = sqlx::query::<D>(&sql).bind(writer).bind(written);
            for id in chunk {
                query = query.bind(*id);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    /// Sets configured fields, each call's field at most once.
    pub(crate) async fn set_metadata_rows(
        c: &mut D::Connection,
        rows: &[FieldValue<'_>],
    ) -> Result<(), StoreError> {
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "INSERT INTO analytics_call_metadata (call_id, field, value) VALUES {} \
                 ON CONFLICT (call_id, field) DO UPDATE SET value = excluded.value",
                tuples(chunk.len(), 3)
            );
            let mut query = sqlx::query::<D>(&sql);
            for row in chunk {
                query = query.bind(row.call_id).bind(row.field).bind(row.value);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    /// Removes fields; the calls that had one of them (once per field removed).
    pub(crate) async fn remove_metadata_rows(
        c: &mut D::Connection,
        rows: &[FieldOf<'_>],
    ) -> Result<Vec<String>, StoreError> {
        let mut removed = Vec::new();
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let matches = (0..chunk.len())
                .map(|i| format!("(call_id = ${} AND field = ${})", 2 * i + 1, 2 * i + 2))
                .collect::<Vec<_>>()
                .join(" OR ");
            let sql =
                format!("DELETE FROM analytics_call_metadata WHERE {matches} RETURNING call_id");
            let mut query = sqlx::query_scalar::<D, String>(&sql);
            for row in chunk {
                query = query.bind(row.call_id).bind(row.field);
            }
            removed.extend(query.fetch_all(&mut *c).await?);
        }
        Ok(removed)
    }

    /// Removes the rows of `fields` of every call of a folder; the calls that had one, each once.
    pub(crate) async fn remove_folder_fields(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        fields: &[String],
    ) -> Result<Vec<String>, StoreError> {
        let mut removed = Vec::new();
        for chunk in fields.chunks(ROWS_PER_STATEMENT) {
            let list = (0..chunk.len())
                .map(|i| format!("${}", i + 4))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "DELETE FROM analytics_call_metadata WHERE field IN ({list}) AND call_id IN \
                 (SELECT id FROM analytics_calls WHERE company = $1 AND organization = $2 AND folder = $3) \
                 RETURNING call_id"
            );
            let mut query = sqlx::query_scalar::<D, String>(&sql)
                .bind(company)
                .bind(organization)
                .bind(folder);
            for field in chunk {
                query = query.bind(field);
            }
            removed.extend(query.fetch_all(&mut *c).await?);
        }
        removed.sort_unstable();
        removed.dedup();
        Ok(removed)
    }

    /// Sets calls' `last_modified`, whole metadata (a change pending for the stored transcript) and reindex
    /// mark, each call at most once.
    pub(crate) async fn set_calls_metadata(
        c: &mut D::Connection,
        rows: &[MetadataChange<'_>],
    ) -> Result<(), StoreError> {
        for chunk in rows.chunks(ROWS_PER_STATEMENT) {
            let sql = format!(
                "WITH v (id, last_modified, metadata, reindex_due) AS (VALUES {}) \
                 UPDATE analytics_calls SET last_modified = v.last_modified, \
                 metadata_json = v.metadata, metadata_written = FALSE, reindex_due = v.reindex_due \
                 FROM v WHERE analytics_calls.id = v.id",
                tuples(chunk.len(), 4)
            );
            let mut query = sqlx::query::<D>(&sql);
            for row in chunk {
                query = query
                    .bind(row.call_id)
                    .bind(row.last_modified)
                    .bind(row.metadata)
                    .bind(row.reindex_due);
            }
            query.execute(&mut *c).await?;
        }
        Ok(())
    }

    /// Clears the reindex mark of the calls, before the reindex worker reads them.
    pub(crate) async fn clear_reindex_due(
        c: &mut D::Connection,
        ids: &[&str],
    ) -> Result<(), StoreError> {
        // Locked in the order of the ids, as a metadata batch locks them: locked in the order of the scan,
        // a batch holding one and waiting for another would deadlock with this statement.
        Self::execute_in(c, ids, |list| {
            format!(
                "UPDATE analytics_calls SET reindex_due = FALSE WHERE id IN \
                 (SELECT id FROM analytics_calls WHERE id IN ({list}) AND reindex_due ORDER BY id{for_update})", for_update = D::FOR_UPDATE)
        })
        .await
    }
}
