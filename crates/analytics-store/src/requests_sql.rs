//! The statements of transcription requests, written once for both databases like `sql.rs`.

use common::db::{Binds, Dialect, Reads, StoreError};

use crate::rows::{Outcome, RequestKeys, RequestRow};
use crate::sql::{placeholders, Statements, ROWS_PER_STATEMENT};

const COLUMNS: &str =
    "id, company, organization, folder, call_id, filename, output, diarize, metadata, \
     audio_key, result_key, state, error, audio_seconds, callback_url, callback_state, \
     callback_attempts, callback_max_attempts, callback_error, created, updated";

impl<D: Dialect> Statements<D>
where
    for<'c> &'c mut D::Connection: sqlx::Executor<'c, Database = D>,
    for<'q> D::Arguments<'q>: sqlx::IntoArguments<'q, D>,
    for<'q> bool: Binds<'q, D>,
    for<'q> f64: Binds<'q, D>,
    for<'q> i64: Binds<'q, D>,
    for<'q> &'q str: Binds<'q, D>,
    for<'q> String: Binds<'q, D>,
    (i64,): Reads<D>,
    (String,): Reads<D>,
    RequestKeys: Reads<D>,
    RequestRow: Reads<D>,
{
    pub(crate) async fn insert_request(
        c: &mut D::Connection,
        row: &RequestRow,
    ) -> Result<(), StoreError> {
        sqlx::query::<D>(&format!(
            "INSERT INTO analytics_requests ({COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
        ))
        .bind(&row.id)
        .bind(&row.company)
        .bind(&row.organization)
        .bind(&row.folder)
        .bind(&row.call_id)
        .bind(&row.filename)
        .bind(&row.output)
        .bind(row.diarize)
        .bind(&row.metadata)
        .bind(&row.audio_key)
        .bind(&row.result_key)
        .bind(&row.state)
        .bind(&row.error)
        .bind(row.audio_seconds)
        .bind(&row.callback_url)
        .bind(&row.callback_state)
        .bind(row.callback_attempts)
        .bind(row.callback_max_attempts)
        .bind(&row.callback_error)
        .bind(&row.created)
        .bind(&row.updated)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn get_request(
        c: &mut D::Connection,
        id: &str,
    ) -> Result<Option<RequestRow>, StoreError> {
        Ok(sqlx::query_as::<D, RequestRow>(&format!(
            "SELECT {COLUMNS} FROM analytics_requests WHERE id = $1{for_update}",
            for_update = D::FOR_UPDATE
        ))
        .bind(id)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn recent_requests(
        c: &mut D::Connection,
        company: &str,
        limit: i64,
    ) -> Result<Vec<RequestRow>, StoreError> {
        Ok(sqlx::query_as::<D, RequestRow>(&format!(
            "SELECT {COLUMNS} FROM analytics_requests WHERE company = $1 \
             ORDER BY created DESC, id DESC LIMIT $2"
        ))
        .bind(company)
        .bind(limit)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn start_request(
        c: &mut D::Connection,
        id: &str,
        updated: &str,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar::<D, i64>(
            "UPDATE analytics_requests SET state = 'transcribing', starts = starts + 1, updated = $2 \
             WHERE id = $1 AND state IN ('queued', 'transcribing') RETURNING starts",
        )
        .bind(id)
        .bind(updated)
        .fetch_optional(&mut *c)
        .await?)
    }

    pub(crate) async fn finish_request(
        c: &mut D::Connection,
        id: &str,
        o: &Outcome<'_>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query::<D>(
            "UPDATE analytics_requests SET state = $2, error = $3, result_key = $4, audio_seconds = $5, \
             callback_state = $6, updated = $7 \
             WHERE id = $1 AND state IN ('queued', 'transcribing')",
        )
        .bind(id)
        .bind(o.state)
        .bind(o.error)
        .bind(o.result_key)
        .bind(o.audio_seconds)
        .bind(o.callback_state)
        .bind(o.updated)
        .execute(&mut *c)
        .await?;
        Ok(D::rows_affected(&done) > 0)
    }

    pub(crate) async fn record_callback(
        c: &mut D::Connection,
        id: &str,
        attempts: i64,
        state: &str,
        error: &str,
        updated: &str,
    ) -> Result<(), StoreError> {
        // Attempts only grow: a late record of an earlier attempt (a redelivered message) changes nothing.
        sqlx::query::<D>(
            "UPDATE analytics_requests SET callback_attempts = $2, callback_state = $3, \
             callback_error = $4, updated = $5 \
             WHERE id = $1 AND callback_attempts <= $2 AND callback_state = 'pending'",
        )
        .bind(id)
        .bind(attempts)
        .bind(state)
        .bind(error)
        .bind(updated)
        .execute(&mut *c)
        .await?;
        Ok(())
    }

    pub(crate) async fn request_keys(
        c: &mut D::Connection,
        company: &str,
        organization: &str,
        folder: &str,
        limit: i64,
    ) -> Result<Vec<RequestKeys>, StoreError> {
        Ok(sqlx::query_as::<D, RequestKeys>(
            "SELECT id, audio_key, result_key FROM analytics_requests \
             WHERE company = $1 AND ($2 = '' OR organization = $2) AND ($3 = '' OR folder = $3) \
             ORDER BY id LIMIT $4",
        )
        .bind(company)
        .bind(organization)
        .bind(folder)
        .bind(limit)
        .fetch_all(&mut *c)
        .await?)
    }

    pub(crate) async fn delete_requests(
        c: &mut D::Connection,
        ids: &[String],
    ) -> Result<(), StoreError> {
        for id in ids {
            sqlx::query::<D>("DELETE FROM analytics_requests WHERE id = $1")
                .bind(id)
                .execute(&mut *c)
                .await?;
        }
        Ok(())
    }

    pub(crate) async fn held_by_requests(
        c: &mut D::Connection,
        ids: &[&str],
    ) -> Result<Vec<String>, StoreError> {
        let mut held = Vec::new();
        for chunk in ids.chunks(ROWS_PER_STATEMENT) {
            let list = placeholders(1, chunk.len());
            let sql = format!(
                "SELECT id FROM analytics_requests WHERE id IN ({list}) \
                 UNION SELECT call_id FROM analytics_requests WHERE call_id IN ({list})"
            );
            let mut query = sqlx::query_as::<D, (String,)>(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            held.extend(query.fetch_all(&mut *c).await?.into_iter().map(|(id,)| id));
        }
        Ok(held)
    }
}
