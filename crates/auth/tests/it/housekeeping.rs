//! Housekeeping: expired login sessions, codes and refresh tokens are purged, and a purge touches only the
//! token service's own tables (the revocation list is purged through its own crate).

use auth::storage::{self, SessionRecord};

use crate::support::*;

async fn expired_sessions_are_purged_and_live_ones_kept(backend: Backend) {
    let s = setup(backend).await;
    let db = &s.auth.db.db;
    for (id, expires_ms) in [("expired", 1_000), ("live", i64::MAX / 2)] {
        storage::insert_session(
            db,
            &SessionRecord {
                id_hash: id.into(),
                company: "acme".into(),
                user_id: s.user.id.clone(),
                auth_time_ms: 500,
                expires_ms,
            },
        )
        .await
        .unwrap();
    }
    storage::purge_expired(db, 2_000)
        .await
        .expect("the purge runs on the token service's tables");
    assert!(storage::get_session(db, "expired").await.unwrap().is_none());
    assert!(storage::get_session(db, "live").await.unwrap().is_some());
}

common::backend_tests!(expired_sessions_are_purged_and_live_ones_kept);
