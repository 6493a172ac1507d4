//! The revocation list's contract, run against both databases.

use common::db::{Database, ProbeArgument};
use common::testing::{Backend, TestDb};

async fn revocation_db(backend: Backend) -> TestDb {
    let t = TestDb::new(backend).await;
    t.db.migrate(&revocation::MIGRATIONS)
        .await
        .expect("migrations apply");
    t.db.migrate(&revocation::MIGRATIONS)
        .await
        .expect("migrations are idempotent");
    t
}

async fn a_revoked_token_is_revoked_and_others_are_not(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    let expires = common::db::now_millis() + 3_600_000;
    assert!(!revocation::is_revoked(db, "jti-1").await.unwrap());
    revocation::revoke(db, "jti-1", "acme", expires)
        .await
        .unwrap();
    assert!(revocation::is_revoked(db, "jti-1").await.unwrap());
    assert!(!revocation::is_revoked(db, "jti-2").await.unwrap());
    assert!(
        !revocation::is_revoked(db, "jti-").await.unwrap(),
        "a prefix is not the token"
    );
    assert!(!revocation::is_revoked(db, "").await.unwrap());

    revocation::revoke(db, "jti-1", "acme", expires)
        .await
        .expect("revoking twice is fine");
    revocation::revoke(db, "jti-1", "acme", expires + 1_000)
        .await
        .expect("revoking twice with another expiry is fine");
    assert!(revocation::is_revoked(db, "jti-1").await.unwrap());
    assert!(!revocation::is_revoked(db, "jti-2").await.unwrap());

    revocation::revoke(db, "jti-2", "globex", expires)
        .await
        .unwrap();
    assert!(revocation::is_revoked(db, "jti-2").await.unwrap());
}

async fn purging_removes_only_what_expired_before_the_instant(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    for (jti, expires_ms) in [("old", 1_000), ("middle", 2_500), ("new", 3_000)] {
        revocation::revoke(db, jti, "acme", expires_ms)
            .await
            .unwrap();
    }
    assert_eq!(revocation::purge_expired(db, 500).await.unwrap(), 0);
    assert_eq!(revocation::purge_expired(db, 2_000).await.unwrap(), 1);
    assert!(!revocation::is_revoked(db, "old").await.unwrap());
    assert!(revocation::is_revoked(db, "middle").await.unwrap());
    assert!(revocation::is_revoked(db, "new").await.unwrap());
    assert_eq!(
        revocation::purge_expired(db, 2_000).await.unwrap(),
        0,
        "nothing more to purge"
    );
    assert_eq!(revocation::purge_expired(db, 2_999).await.unwrap(), 1);
    assert!(!revocation::is_revoked(db, "middle").await.unwrap());
    assert!(revocation::is_revoked(db, "new").await.unwrap());

    // A token revoked again after its entry was purged is revoked again.
    revocation::revoke(db, "old", "acme", 10_000).await.unwrap();
    assert!(revocation::is_revoked(db, "old").await.unwrap());
    assert_eq!(revocation::purge_expired(db, 5_000).await.unwrap(), 1);
    assert!(revocation::is_revoked(db, "old").await.unwrap());
    assert!(!revocation::is_revoked(db, "new").await.unwrap());
}

async fn a_revocation_in_a_dropped_transaction_is_not_kept(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    let expires = common::db::now_millis() + 3_600_000;

    let mut tx = db.begin().await.unwrap();
    revocation::revoke(&mut tx, "jti-tx", "acme", expires)
        .await
        .unwrap();
    assert!(
        revocation::is_revoked(&mut tx, "jti-tx").await.unwrap(),
        "the transaction sees its own write"
    );
    drop(tx);
    assert!(!revocation::is_revoked(db, "jti-tx").await.unwrap());

    let mut tx = db.begin().await.unwrap();
    revocation::revoke(&mut tx, "jti-tx", "acme", expires)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(!revocation::is_revoked(db, "jti-tx").await.unwrap());

    let mut tx = db.begin().await.unwrap();
    revocation::revoke(&mut tx, "jti-tx", "acme", expires)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert!(revocation::is_revoked(db, "jti-tx").await.unwrap());

    // A purge inside a dropped transaction removes nothing either.
    let mut tx = db.begin().await.unwrap();
    assert_eq!(
        revocation::purge_expired(&mut tx, expires + 1)
            .await
            .unwrap(),
        1
    );
    drop(tx);
    assert!(revocation::is_revoked(db, "jti-tx").await.unwrap());
}

/// The probe other owners place in their statements gives the same answer as `is_revoked`.
async fn the_revoked_probe_agrees_with_the_list(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    revocation::revoke(db, "jti-p", "acme", common::db::now_millis() + 60_000)
        .await
        .unwrap();
    for jti in ["jti-p", "jti-q", "jti-", ""] {
        let probe = revocation::revoked(jti);
        let sql = format!("SELECT $1 AS other, {} AS answer", probe.sql(2));
        assert_eq!(probe.arguments, [ProbeArgument::Text(jti)]);
        let answer: (i64, bool) = match db {
            Database::Postgres(pool, _) => sqlx::query_as(&sql)
                .bind(7_i64)
                .bind(jti)
                .fetch_one(pool)
                .await
                .unwrap(),
            Database::Sqlite(pool, ..) => sqlx::query_as(&sql)
                .bind(7_i64)
                .bind(jti)
                .fetch_one(pool)
                .await
                .unwrap(),
        };
        let answer = answer.1;
        assert_eq!(
            answer,
            revocation::is_revoked(db, jti).await.unwrap(),
            "{jti:?}"
        );
    }
}

common::backend_tests!(
    the_revoked_probe_agrees_with_the_list,
    a_revoked_token_is_revoked_and_others_are_not,
    purging_removes_only_what_expired_before_the_instant,
    a_revocation_in_a_dropped_transaction_is_not_kept,
);
