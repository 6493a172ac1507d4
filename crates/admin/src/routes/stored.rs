//! What the users, roles and clients endpoints share about changing a stored record: finding it in the
//! caller's company (404), writing it or deleting exactly the version the caller read (412 when it has
//! moved on since), and committing each change with its audit entry. An endpoint keeps only what is its
//! own: the permissions it checks and the writes a change causes besides (revocations, a new password),
//! which it makes in the transaction it hands over here.

use chrono::{DateTime, Utc};
use common::db::{Database, StoreError, Tx};
use common::{ApiError, ErrorCode};
use serde_json::{Map, Value};

use crate::api::changes;
use crate::audit::{self, Change};
use crate::caller::Caller;
use crate::state::AdminState;

/// A record of the directory that the administration API creates, replaces and deletes.
pub(crate) trait Stored: Sized {
    /// The record's kind, as answers name it and as the audit log types it.
    const KIND: &'static str;
    /// Its name in the company: the path segment that finds it.
    fn key(&self) -> &str;
    fn version(&self) -> i64;
    /// The fields an audit entry compares.
    fn audit_view(&self) -> Map<String, Value>;
    /// Marks the record as changed by `by` at `at`, one version on.
    fn stamp(&mut self, by: &str, at: DateTime<Utc>);
    async fn find(db: &Database, company: &str, key: &str) -> Result<Option<Self>, StoreError>;
    async fn insert(tx: &mut Tx, record: &Self) -> Result<(), StoreError>;
    /// Writes the record over its previous version (`Stale` when that has changed since).
    async fn update(tx: &mut Tx, record: &Self) -> Result<(), StoreError>;
    /// Deletes the record if its stored version is `version`; false when it is missing or changed.
    async fn delete_if_version(
        tx: &mut Tx,
        company: &str,
        key: &str,
        version: i64,
    ) -> Result<bool, StoreError>;
}

/// Implements [`Stored`] for a record of the directory: its kind, the field that names it, the function
/// giving the fields an audit entry compares, and the directory's functions that find, insert, update
/// and delete it. Every such record has `version`, `modified_on` and `modified_by`.
macro_rules! stored {
    ($record:ty {
        kind: $kind:expr,
        key: $key:ident,
        audit: $audit:path,
        find: $find:path,
        insert: $insert:path,
        update: $update:path,
        delete: $delete:path $(,)?
    }) => {
        impl $crate::routes::stored::Stored for $record {
            const KIND: &'static str = $kind;

            fn key(&self) -> &str {
                &self.$key
            }

            fn version(&self) -> i64 {
                self.version
            }

            fn audit_view(&self) -> ::serde_json::Map<String, ::serde_json::Value> {
                $audit(self)
            }

            fn stamp(&mut self, by: &str, at: ::chrono::DateTime<::chrono::Utc>) {
                self.modified_on = at;
                self.modified_by = by.to_string();
                self.version += 1;
            }

            async fn find(
                db: &::common::db::Database,
                company: &str,
                key: &str,
            ) -> Result<Option<Self>, ::common::db::StoreError> {
                $find(db, company, key).await
            }

            async fn insert(
                tx: &mut ::common::db::Tx,
                record: &Self,
            ) -> Result<(), ::common::db::StoreError> {
                $insert(tx, record).await
            }

            async fn update(
                tx: &mut ::common::db::Tx,
                record: &Self,
            ) -> Result<(), ::common::db::StoreError> {
                $update(tx, record).await
            }

            async fn delete_if_version(
                tx: &mut ::common::db::Tx,
                company: &str,
                key: &str,
                version: i64,
            ) -> Result<bool, ::common::db::StoreError> {
                $delete(tx, company, key, version).await
            }
        }
    };
}
pub(crate) use stored;

/// The record named `key` in `company`, or 404.
pub(crate) async fn load<R: Stored>(
    state: &AdminState,
    company: &str,
    key: &str,
) -> Result<R, ApiError> {
    R::find(&state.db, company, key)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("{} {key} not found", R::KIND)))
}

/// Inserts `record` and commits it with its entry, which shows `view` of it.
pub(crate) async fn create<R: Stored, P>(
    state: &AdminState,
    mut tx: Tx,
    caller: &Caller<P>,
    record: &R,
    view: &Map<String, Value>,
) -> Result<(), ApiError> {
    R::insert(&mut tx, record).await?;
    let change = Change {
        action: audit::CREATE,
        resource_type: R::KIND,
        resource_id: record.key(),
        version: Some(record.version()),
        changes: changes(None, Some(view)),
    };
    audit::commit(state, tx, caller, change).await
}

/// Writes `after` over `before` and commits it with its entry, which shows `view` of `after`.
pub(crate) async fn replace<R: Stored, P>(
    state: &AdminState,
    mut tx: Tx,
    caller: &Caller<P>,
    before: &R,
    after: &R,
    view: &Map<String, Value>,
) -> Result<(), ApiError> {
    R::update(&mut tx, after).await?;
    let change = Change {
        action: audit::REPLACE,
        resource_type: R::KIND,
        resource_id: after.key(),
        version: Some(after.version()),
        changes: changes(Some(&before.audit_view()), Some(view)),
    };
    audit::commit(state, tx, caller, change).await
}

/// Deletes `current` if it is still the version read (412 otherwise) and commits that with its entry.
pub(crate) async fn delete<R: Stored, P>(
    state: &AdminState,
    mut tx: Tx,
    caller: &Caller<P>,
    current: &R,
) -> Result<(), ApiError> {
    let (key, version) = (current.key(), current.version());
    if !R::delete_if_version(&mut tx, &caller.company, key, version).await? {
        return Err(ApiError::new(
            ErrorCode::PreconditionFailed,
            format!(
                "the {} was changed or deleted since you read it; read it again",
                R::KIND
            ),
        ));
    }
    let change = Change {
        action: audit::DELETE,
        resource_type: R::KIND,
        resource_id: key,
        version: None,
        changes: changes(Some(&current.audit_view()), None),
    };
    audit::commit(state, tx, caller, change).await
}
