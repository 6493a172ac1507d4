//! A replay that races the first exchange of a code: the replay marks the code before it revokes, and
//! the first exchange checks the mark once its tokens are stored, so whichever order the two take,
//! nothing the code issued stays usable.

use common::db::Database;
use common::secrets::hash_token;

use crate::support::*;

async fn live_refresh_tokens(db: &Database) -> (i64, i64) {
    let sql = "SELECT COUNT(*), COUNT(revoked_ms) FROM refresh_tokens";
    match db {
        Database::Postgres(pool, _) => sqlx::query_as(sql).fetch_one(pool).await.unwrap(),
        Database::Sqlite(pool, ..) => sqlx::query_as(sql).fetch_one(pool).await.unwrap(),
    }
}

async fn an_exchange_overtaken_by_a_replay_revokes_what_it_issued(backend: Backend) {
    let s = setup(backend).await;
    let code = authorize(&s.auth, &s.client_id, &[("scope", "refreshToken")])
        .await
        .code;
    // The replay's mark lands while the first exchange is between spending the code and storing its
    // tokens (here: before it starts, which is the same to it).
    auth::storage::mark_code_replayed(
        &s.auth.service.state.db,
        &hash_token(&code),
        common::db::now_millis(),
    )
    .await
    .unwrap();
    let (status, body, _) = exchange_code(&s, &code).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant")),
        "{body}"
    );
    let (stored, revoked) = live_refresh_tokens(&s.auth.db.db).await;
    assert_eq!(
        (stored, revoked),
        (1, 1),
        "the refresh token it stored is revoked"
    );
}

async fn an_exchange_without_a_replay_keeps_its_tokens(backend: Backend) {
    let s = setup(backend).await;
    let body = tokens(&s, &[("scope", "refreshToken")]).await;
    assert!(body["refresh_token"].is_string());
    assert_eq!(live_refresh_tokens(&s.auth.db.db).await, (1, 0));
}

common::backend_tests!(
    an_exchange_overtaken_by_a_replay_revokes_what_it_issued,
    an_exchange_without_a_replay_keeps_its_tokens,
);
