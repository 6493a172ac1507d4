//! Reuse of a refresh token that races its own rotation: many uses of one token at once, of which one
//! rotates it and the others find it rotated. Whatever order their statements take, the family is
//! revoked afterwards, the token the winner stored included, with the access tokens issued with it.

use common::db::Database;

use crate::support::*;

/// Refresh tokens of the family of `token_hash` that are neither revoked nor rotated.
async fn live_in_family(db: &Database, token_hash: &str) -> i64 {
    let sql = "SELECT COUNT(*) FROM refresh_tokens WHERE revoked_ms IS NULL AND used_ms IS NULL \
               AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)";
    match db {
        Database::Postgres(pool, _) => sqlx::query_scalar(sql)
            .bind(token_hash)
            .fetch_one(pool)
            .await
            .unwrap(),
        Database::Sqlite(pool, ..) => sqlx::query_scalar(sql)
            .bind(token_hash)
            .fetch_one(pool)
            .await
            .unwrap(),
    }
}

async fn concurrent_uses_of_one_refresh_token_leave_no_usable_token(backend: Backend) {
    const TRIALS: usize = 12;
    const AT_ONCE: usize = 20;
    let s = setup(backend).await;
    for trial in 0..TRIALS {
        let body = tokens(&s, &[("scope", "refreshToken")]).await;
        let token = body["refresh_token"].as_str().unwrap().to_string();
        let tasks: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                let (url, id, secret, token) = (
                    s.auth.token_url("acme"),
                    s.client_id.clone(),
                    s.secret.clone(),
                    token.clone(),
                );
                tokio::spawn(async move {
                    let response = reqwest::Client::new()
                        .post(url)
                        .form(&[
                            ("client_id", id.as_str()),
                            ("client_secret", secret.as_str()),
                            ("grant_type", "refresh_token"),
                            ("refresh_token", token.as_str()),
                        ])
                        .send()
                        .await
                        .expect("token request");
                    read(response).await
                })
            })
            .collect();
        let mut granted = Vec::new();
        for task in tasks {
            let (status, body, _) = task.await.unwrap();
            match status {
                200 => granted.push(body),
                400 => assert_eq!(body["error"], "invalid_grant", "{body}"),
                _ => panic!("trial {trial}: {status} {body}"),
            }
        }
        assert!(granted.len() <= 1, "trial {trial}: {granted:?}");
        let hash = common::secrets::hash_token(&token);
        assert_eq!(
            live_in_family(&s.auth.db.db, &hash).await,
            0,
            "trial {trial}: a refresh token of the family survived the detected reuse"
        );
        for body in &granted {
            let new = body["refresh_token"].as_str().unwrap();
            let (status, again, _) = refresh(&s.auth, &s.client_id, &s.secret, new).await;
            assert_eq!(
                (status, again["error"].as_str()),
                (400, Some("invalid_grant")),
                "trial {trial}: the winner's refresh token still works: {again}"
            );
            let access = body["access_token"].as_str().unwrap();
            let (_, introspected) = introspect(&s.auth, &s.client_id, &s.secret, access).await;
            assert_eq!(
                introspected["active"], false,
                "trial {trial}: the winner's access token is still active"
            );
        }
    }
}

common::backend_tests!(concurrent_uses_of_one_refresh_token_leave_no_usable_token);
