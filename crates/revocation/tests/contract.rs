//! The revocation list's contract, run against both databases.

use common::db::{Database, ProbeArgument};
use common::testing::{Backend, TestDb};
use revocation::{Holder, Issued};

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

fn token<'a>(jti: &'a str, client_id: &'a str, user_id: Option<&'a str>) -> Issued<'a> {
    Issued {
        jti,
        company: "acme",
        client_id,
        client_secret_set_ms: 1_000,
        user_id,
        sessions_valid_after_ms: 5_000,
    }
}

async fn revoked(db: &Database, token: Issued<'_>) -> bool {
    revocation::is_token_revoked(db, &token).await.unwrap()
}

/// A token is revoked by its id, with its client (under a secret set before the instant, or all of them)
/// or with its user (while its sessions were valid from before the instant), and only in its own
/// company.
async fn a_token_is_revoked_by_its_id_or_with_its_holder(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    let client_token = token("j1", "c1", None);
    let user_token = token("j2", "c1", Some("u1"));
    assert!(!revoked(db, client_token).await);
    assert!(!revoked(db, user_token).await);

    // A rotation at the instant the token's own secret was set spares it; a later one does not.
    revocation::revoke_issued_before(db, "acme", Holder::Client("c1"), 1_000, None)
        .await
        .unwrap();
    assert!(!revoked(db, client_token).await);
    revocation::revoke_issued_before(db, "acme", Holder::Client("c1"), 1_001, None)
        .await
        .unwrap();
    assert!(revoked(db, client_token).await);
    assert!(
        revoked(db, user_token).await,
        "the client's user tokens too"
    );
    assert!(
        !revoked(db, token("j3", "c2", None)).await,
        "another client"
    );
    let elsewhere = Issued {
        company: "globex",
        ..client_token
    };
    assert!(!revoked(db, elsewhere).await, "another company");
    assert_eq!(
        revocation::revoked_before(db, "acme", Holder::Client("c1"))
            .await
            .unwrap(),
        Some(1_001)
    );

    // An earlier instant does not bring tokens back.
    revocation::revoke_issued_before(db, "acme", Holder::Client("c1"), 10, Some(99))
        .await
        .unwrap();
    assert!(revoked(db, client_token).await);
    assert_eq!(
        revocation::revoked_before(db, "acme", Holder::Client("c1"))
            .await
            .unwrap(),
        Some(1_001)
    );

    // A deleted client's tokens are all revoked, whatever secret they were issued under.
    let latest = Issued {
        client_secret_set_ms: i64::MAX - 1,
        ..token("j4", "c3", None)
    };
    assert!(!revoked(db, latest).await);
    revocation::revoke_issued_before(db, "acme", Holder::Client("c3"), revocation::ALL, None)
        .await
        .unwrap();
    assert!(revoked(db, latest).await);

    // A user's tokens issued in the user's state before the instant, whatever their client; not a
    // client-credentials token.
    let user_of_c2 = token("j5", "c2", Some("u2"));
    revocation::revoke_issued_before(db, "acme", Holder::User("u2"), 5_000, None)
        .await
        .unwrap();
    assert!(
        !revoked(db, user_of_c2).await,
        "issued in the state of the instant"
    );
    revocation::revoke_issued_before(db, "acme", Holder::User("u2"), 5_001, None)
        .await
        .unwrap();
    assert!(revoked(db, user_of_c2).await);
    assert!(!revoked(db, token("j6", "c2", Some("u3"))).await);
    assert!(!revoked(db, token("j7", "c2", None)).await);
    assert_eq!(
        revocation::revoked_before(db, "acme", Holder::Client("u2"))
            .await
            .unwrap(),
        None,
        "a user is not a client"
    );

    // The list by id still counts.
    let listed = token("j8", "c2", None);
    assert!(!revoked(db, listed).await);
    revocation::revoke(db, "j8", "acme", 10_000).await.unwrap();
    assert!(revoked(db, listed).await);
}

/// Entries of holders go when kept until before the instant of the purge; one kept for good stays.
async fn purging_forgets_holders_kept_until_before_the_instant(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    revocation::revoke_issued_before(db, "acme", Holder::User("u1"), 5_001, Some(2_000))
        .await
        .unwrap();
    revocation::revoke_issued_before(db, "acme", Holder::Client("c1"), 1_001, None)
        .await
        .unwrap();
    assert_eq!(revocation::purge_expired(db, 1_999).await.unwrap(), 0);
    assert!(revoked(db, token("j1", "c2", Some("u1"))).await);
    assert_eq!(revocation::purge_expired(db, 2_001).await.unwrap(), 1);
    assert!(!revoked(db, token("j1", "c2", Some("u1"))).await);
    assert_eq!(revocation::purge_expired(db, i64::MAX).await.unwrap(), 0);
    assert!(revoked(db, token("j2", "c1", None)).await, "kept for good");

    // Deleting the client after its rotation keeps its entry only for a while.
    revocation::revoke_issued_before(
        db,
        "acme",
        Holder::Client("c1"),
        revocation::ALL,
        Some(3_000),
    )
    .await
    .unwrap();
    assert_eq!(revocation::purge_expired(db, 3_001).await.unwrap(), 1);
}

/// The probe other owners place in their statements, at placeholders of their choosing, gives the
/// answer `is_token_revoked` gives.
async fn the_revoked_probe_agrees_with_the_list(backend: Backend) {
    let t = revocation_db(backend).await;
    let db = &t.db;
    revocation::revoke(db, "jti-p", "acme", common::db::now_millis() + 60_000)
        .await
        .unwrap();
    revocation::revoke_issued_before(db, "acme", Holder::User("u1"), 5_001, None)
        .await
        .unwrap();
    for issued in [
        token("jti-p", "c1", None),
        token("jti-q", "c1", None),
        token("jti-", "c1", None),
        token("", "c1", None),
        token("jti-q", "c1", Some("u1")),
        token("jti-q", "c1", Some("u2")),
    ] {
        let probe = revocation::token_revoked(&issued);
        let sql = format!("SELECT $1 AS a, $2 AS b, {} AS answer", probe.sql(3));
        let arguments = probe.arguments.clone();
        let answer: bool = match db {
            Database::Postgres(pool, _) => {
                let mut query = sqlx::query_as::<_, (String, i64, bool)>(&sql)
                    .bind("a")
                    .bind(2_i64);
                for argument in arguments {
                    query = match argument {
                        ProbeArgument::Text(text) => query.bind(text),
                        ProbeArgument::Integer(number) => query.bind(number),
                    };
                }
                query.fetch_one(pool).await.unwrap().2
            }
            Database::Sqlite(pool, ..) => {
                let mut query = sqlx::query_as::<_, (String, i64, bool)>(&sql)
                    .bind("a")
                    .bind(2_i64);
                for argument in arguments {
                    query = match argument {
                        ProbeArgument::Text(text) => query.bind(text),
                        ProbeArgument::Integer(number) => query.bind(number),
                    };
                }
                query.fetch_one(pool).await.unwrap().2
            }
        };
        assert_eq!(answer, revoked(db, issued).await, "{issued:?}");
    }
    assert!(revoked(db, token("jti-p", "c1", None)).await);
    assert!(revoked(db, token("jti-q", "c1", Some("u1"))).await);
}

common::backend_tests!(
    the_revoked_probe_agrees_with_the_list,
    a_token_is_revoked_by_its_id_or_with_its_holder,
    purging_forgets_holders_kept_until_before_the_instant,
    a_revoked_token_is_revoked_and_others_are_not,
    purging_removes_only_what_expired_before_the_instant,
    a_revocation_in_a_dropped_transaction_is_not_kept,
);
