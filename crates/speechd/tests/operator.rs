//! The operator contract of docs/operations.md, exercised through the real `speechd` binary: bootstrap is
//! idempotent, keeps no secret on disk and prints new working credentials each run; `serve` runs the services, answers the operational
//! endpoints and stops gracefully on SIGTERM.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::*;

const CONTRACT_FIELDS: &[&str] = &[
    "company",
    "auth_url",
    "api_url",
    "base_url",
    "track_url",
    "client_id",
    "client_secret",
    "admin_username",
    "admin_password",
    "organization",
    "folder",
    "app_key",
    "callback_secret",
];

/// Every file under `dir` with its contents.
fn walk(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

/// Every directory and file under `dir`, `dir` included, whose mode lets its group or others read,
/// write or enter it, with that mode.
#[cfg(unix)]
fn shared_with_others(dir: &Path) -> Vec<(std::path::PathBuf, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mode = std::fs::symlink_metadata(dir).unwrap().permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        out.push((dir.to_path_buf(), mode));
    }
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(shared_with_others(&path));
        } else if meta.permissions().mode() & 0o077 != 0 {
            out.push((path, meta.permissions().mode() & 0o777));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_is_idempotent_and_prints_the_contract_fields() {
    let data = temp_dir();
    let ports = Ports::free();
    let first = bootstrap(&data, &ports);
    for field in CONTRACT_FIELDS {
        assert!(
            first.get(*field).is_some(),
            "bootstrap output lacks {field}: {first}"
        );
    }
    assert_eq!(first["company"], "acme");
    assert_eq!(
        first["base_url"],
        format!("http://127.0.0.1:{}", ports.analytics)
    );
    assert_eq!(
        (first["organization"].as_str(), first["folder"].as_str()),
        (Some("main"), Some("calls"))
    );
    assert_eq!(
        first["auth_url"],
        format!("http://127.0.0.1:{}", ports.auth)
    );
    assert_eq!(
        first["track_url"],
        format!("http://127.0.0.1:{}", ports.ingest)
    );
    let app_key = first["app_key"].as_str().expect("an app key");
    assert!(app_key.len() == 32 && app_key.bytes().all(|b| b.is_ascii_hexdigit()));
    // A second run keeps what exists and replaces the secrets: secrets are stored only as hashes, so
    // there is nothing to print again.
    let second = bootstrap(&data, &ports);
    assert_eq!(second["client_id"], first["client_id"], "the same client");
    assert_eq!(second["app_key"], first["app_key"], "the same project");
    let callback_secret = first["callback_secret"]
        .as_str()
        .expect("a callback secret");
    assert!(callback_secret.starts_with("whsec_") && callback_secret.len() > 40);
    assert_eq!(
        second["callback_secret"], first["callback_secret"],
        "receivers keep their key across runs"
    );
    assert_ne!(second["client_secret"], first["client_secret"]);
    assert_ne!(second["admin_password"], first["admin_password"]);
    assert!(
        !data.join("bootstrap").exists(),
        "no credentials are written to disk"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&data.join("secret.key")), 0o600);
        assert_eq!(mode(&data), 0o700, "the data directory is the owner's only");
        assert_eq!(mode(&data.join("speech.db")), 0o600, "the database file");
    }
    let everything = walk(&data);
    for secret in [&first, &second]
        .iter()
        .flat_map(|c| [&c["client_secret"], &c["admin_password"]])
    {
        let secret = secret.as_str().unwrap();
        for (path, bytes) in &everything {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "a secret is stored in plain text in {}",
                path.display()
            );
        }
    }

    let bad = speechd(&data, &ports)
        .args([
            "bootstrap",
            "--company",
            "Not A Name",
            "--redirect-uri",
            "http://127.0.0.1:9/cb",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--company"));
    let _ = std::fs::remove_dir_all(&data);
}

/// Bootstrap finds its own client, not one an administrator named `bootstrap`: clients named so are made
/// until one sorts before it (a lookup by name would take that one, give it a new secret and print
/// credentials its one grant cannot use), the bootstrap client loses its grants, and the next run prints
/// the same client, repaired, whose credentials work, and leaves the look-alikes as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_repairs_its_own_client_and_leaves_a_look_alike_alone() {
    let data = temp_dir();
    let ports = Ports::free();
    let first = bootstrap(&data, &ports);
    let server = serve(&data, &ports).await;
    let admin = sign_in_as_admin(&first).await;
    let admin = admin["access_token"].as_str().expect("an admin token");
    let api_url = first["api_url"].as_str().unwrap();
    let ours = first["client_id"].as_str().unwrap().to_string();
    let http = reqwest::Client::new();
    let mut look_alikes = Vec::new();
    // Random ids: the expected number of tries is 1/p for an id below ours with probability p, so the
    // bound makes a failure as unlikely as 1 in 2,000 over all of ours (the admin API's per-second limit
    // is waited out, not counted).
    while look_alikes.last().is_none_or(|id: &String| *id > ours) {
        assert!(
            look_alikes.len() < 2000,
            "a random id sorts first sooner or later"
        );
        let created = http
            .post(format!("{api_url}/admin/v1/clients"))
            .bearer_auth(admin)
            .json(
                &serde_json::json!({"name": "bootstrap", "grant_types": ["refresh_token"],
                "scopes": ["analytics:read"]}),
            )
            .send()
            .await
            .unwrap();
        if created.status() == 429 {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            continue;
        }
        assert_eq!(created.status(), 201);
        let created: Value = created.json().await.unwrap();
        look_alikes.push(created["client_id"].as_str().unwrap().to_string());
    }
    // The bootstrap client itself is left with one grant and one scope.
    let url = format!("{api_url}/admin/v1/clients/{ours}");
    let current = http.get(&url).bearer_auth(admin).send().await.unwrap();
    let etag = current.headers()["etag"].to_str().unwrap().to_string();
    let mut record: Value = current.json().await.unwrap();
    record["grant_types"] = serde_json::json!(["refresh_token"]);
    record["scopes"] = serde_json::json!(["analytics:read"]);
    let put = http
        .put(&url)
        .bearer_auth(admin)
        .header("If-Match", etag)
        .json(&record)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200, "{}", put.text().await.unwrap());

    let second = bootstrap(&data, &ports);
    assert_eq!(second["client_id"], ours, "its own client, found again");
    let token = client_token(&second).await;
    assert_eq!(
        token["token_type"], "Bearer",
        "the printed credentials work: {token}"
    );
    // The look-alike a lookup by name would take (it sorts first) and the first one made.
    for id in [look_alikes.last(), look_alikes.first()]
        .into_iter()
        .flatten()
    {
        let record: Value = http
            .get(format!("{api_url}/admin/v1/clients/{id}"))
            .bearer_auth(admin)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            record["grant_types"],
            serde_json::json!(["refresh_token"]),
            "{record}"
        );
        assert_eq!(record["admin_access"], false, "{record}");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_platform_accepts_the_bootstrap_credentials() {
    let data = temp_dir();
    let ports = Ports::free();
    let creds = bootstrap(&data, &ports);
    let server = serve(&data, &ports).await;
    let auth_url = creds["auth_url"].as_str().unwrap();

    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        let response = reqwest::get(format!("{auth_url}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }

    let token = client_token(&creds).await;
    assert_eq!(token["token_type"], "Bearer", "{token}");
    quick_start(&creds, token["access_token"].as_str().unwrap()).await;
    track_and_read_back(&creds, token["access_token"].as_str().unwrap()).await;
    // The database, the search index with its lock files, the stored transcript: the owner's alone.
    #[cfg(unix)]
    {
        assert!(
            walk(&data.join("analytics")).len() > 2,
            "the index and the object store are on disk"
        );
        assert_eq!(shared_with_others(&data), vec![], "while serving");
    }

    // The admin user signs in through the login page.
    let tokens = sign_in_as_admin(&creds).await;
    let user_token = tokens["access_token"]
        .as_str()
        .expect("code exchange gives an access token");

    // The admin user's token reads its own record from the administration API.
    let api_url = creds["api_url"].as_str().unwrap();
    assert_eq!(api_url, format!("http://127.0.0.1:{}", ports.admin));
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        assert_eq!(
            reqwest::get(format!("{api_url}{path}"))
                .await
                .unwrap()
                .status(),
            200,
            "admin {path}"
        );
    }
    let record: Value = reqwest::Client::new()
        .get(format!("{api_url}/admin/v1/users/admin"))
        .bearer_auth(user_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(record["username"], "admin", "{record}");
    assert_eq!(record["_system_properties"]["login_count"], 1);
    let refused = reqwest::Client::new()
        .get(format!("{api_url}/admin/v1/users/admin"))
        .bearer_auth(token["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(
        refused.status(),
        403,
        "a client-credentials token is not an admin user"
    );
    a_deleted_clients_token_is_refused_everywhere(&creds, user_token).await;

    // A callback secret rotated through the API is the one bootstrap prints from then on.
    let rotated: Value = reqwest::Client::new()
        .post(format!(
            "{}/callbacks/acme/secret",
            creds["base_url"].as_str().unwrap()
        ))
        .bearer_auth(token["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rotated["generation"], 1, "{rotated}");
    assert_ne!(rotated["callback_secret"], creds["callback_secret"]);
    let again = bootstrap(&data, &ports);
    assert_eq!(again["callback_secret"], rotated["callback_secret"]);

    // SIGTERM stops the server gracefully with a zero exit status.
    let mut server = server;
    std::process::Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    let mut status = None;
    for _ in 0..100 {
        if let Some(s) = server.0.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(status.expect("speechd exits after SIGTERM").success());
    #[cfg(unix)]
    assert_eq!(shared_with_others(&data), vec![], "after the stop");
    let _ = std::fs::remove_dir_all(&data);
}

/// The tokens of the admin user signed in through the login page with the authorization code flow (the
/// bootstrap client, its registered redirect URI).
async fn sign_in_as_admin(creds: &Value) -> Value {
    let auth_url = creds["auth_url"].as_str().unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let authorize = reqwest::Url::parse_with_params(
        &format!("{auth_url}/oauth/acme/authorize"),
        &[
            ("client_id", creds["client_id"].as_str().unwrap()),
            ("response_type", "code"),
            ("redirect_uri", "http://127.0.0.1:9/cb"),
            ("state", "s1"),
        ],
    )
    .unwrap();
    // The form carries a CSRF token that must match its pre-login cookie.
    let form = browser.get(authorize.clone()).send().await.unwrap();
    let cookie = form.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let html = form.text().await.unwrap();
    let start = html.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = &html[start..start + html[start..].find('"').unwrap()];
    let login = browser
        .post(authorize)
        .header("Cookie", cookie)
        .form(&[
            ("username", creds["admin_username"].as_str().unwrap()),
            ("password", creds["admin_password"].as_str().unwrap()),
            ("csrf", csrf),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 303);
    let location = login.headers()["location"].to_str().unwrap();
    assert!(
        location.starts_with("http://127.0.0.1:9/cb?code="),
        "{location}"
    );
    let code = reqwest::Url::parse(location)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .to_string();
    reqwest::Client::new()
        .post(format!("{auth_url}/oauth/acme/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("client_id", creds["client_id"].as_str().unwrap()),
            ("client_secret", creds["client_secret"].as_str().unwrap()),
            ("code", &code),
            ("redirectURI", "http://127.0.0.1:9/cb"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A client made and deleted through the administration API: its token, accepted by the analytics and
/// ingestion APIs before, is refused by both within their revocation cache time (1 s), and introspection
/// says it is inactive at once.
async fn a_deleted_clients_token_is_refused_everywhere(creds: &Value, admin_token: &str) {
    let http = reqwest::Client::new();
    let (auth_url, api_url) = (
        creds["auth_url"].as_str().unwrap(),
        creds["api_url"].as_str().unwrap(),
    );
    let created = http
        .post(format!("{api_url}/admin/v1/clients"))
        .bearer_auth(admin_token)
        .json(
            &serde_json::json!({"name": "reporting", "grant_types": ["client_credentials"],
            "scopes": ["analytics:read", "events:read"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let etag = created.headers()["etag"].to_str().unwrap().to_string();
    let client: Value = created.json().await.unwrap();
    let (id, secret) = (
        client["client_id"].as_str().unwrap(),
        client["client_secret"].as_str().unwrap(),
    );
    let token: Value = http
        .post(format!("{auth_url}/oauth/acme/token"))
        .basic_auth(id, Some(secret))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["access_token"].as_str().unwrap();
    let search = format!(
        "{}/search/acme/{}?token={token}&q=invoice",
        creds["base_url"].as_str().unwrap(),
        creds["organization"].as_str().unwrap()
    );
    let events = format!(
        "{}/v3/{}/events",
        creds["track_url"].as_str().unwrap(),
        creds["app_key"].as_str().unwrap()
    );
    let statuses = || async {
        let analytics = http.get(&search).send().await.unwrap().status().as_u16();
        let ingest = http
            .get(&events)
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        (analytics, ingest)
    };
    assert_eq!(statuses().await, (200, 200));

    let deleted = http
        .delete(format!("{api_url}/admin/v1/clients/{id}"))
        .bearer_auth(admin_token)
        .header("If-Match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let since = std::time::Instant::now();
    let introspection: Value = http
        .post(format!("{auth_url}/oauth/acme/introspect"))
        .basic_auth(
            creds["client_id"].as_str().unwrap(),
            creds["client_secret"].as_str(),
        )
        .form(&[("token", token)])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(introspection["active"], false, "{introspection}");
    while statuses().await != (401, 401) {
        assert!(
            since.elapsed() < Duration::from_millis(2000),
            "still accepted {:?} after the deletion: {:?}",
            since.elapsed(),
            statuses().await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The README's ingestion quick start: a batch sent to the bootstrap project, read back with the client's
/// token.
async fn track_and_read_back(creds: &Value, token: &str) {
    let track_url = creds["track_url"].as_str().unwrap();
    let app_key = creds["app_key"].as_str().unwrap();
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        let response = reqwest::get(format!("{track_url}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "ingest {path}");
    }
    let batch = r#"{"events":[{"event_name":"signup","user_id":"u-1","event_timestamp_epoch":"2026-11-20T10:15:00","plan":"pro"}]}"#;
    let body: String = url::form_urlencoded::byte_serialize(batch.as_bytes()).collect();
    let answer: Value = reqwest::Client::new()
        .post(format!("{track_url}/v3/{app_key}/track"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["status"], true, "{answer}");
    assert_eq!(answer["events_count"], 1, "{answer}");
    let page: Value = reqwest::Client::new()
        .get(format!("{track_url}/v3/{app_key}/events"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page["events"][0]["event_name"], "signup", "{page}");
    assert_eq!(page["events"][0]["properties"]["plan"], "pro", "{page}");
}

/// The quick start again with the object store and the search index chosen by the environment alone:
/// S3 (a real S3-protocol server) and Meilisearch. The transcript lands in the bucket, nothing under the
/// data directory's objects. Needs a Meilisearch server (its name says so: `.config/nextest.toml`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environment_puts_analytics_on_s3_and_meilisearch() {
    use common::objects::{ObjectStore, S3Store};
    use common::testing::{meili, s3};
    let meili = meili::MeiliServer::start().await;
    let s3 = s3::S3Server::start();
    let env = [
        ("S3_ENDPOINT", s3.endpoint.clone()),
        ("S3_BUCKET", "speech-objects".to_string()),
        ("S3_ACCESS_KEY_ID", s3::ACCESS_KEY_ID.to_string()),
        ("S3_SECRET_ACCESS_KEY", s3::SECRET_ACCESS_KEY.to_string()),
        ("MEILI_URL", meili.url.clone()),
        ("MEILI_KEY", meili::MASTER_KEY.to_string()),
    ];
    let data = temp_dir();
    let ports = Ports::free();
    let creds = bootstrap_with(&data, &ports, &env);
    let _server = serve_with(&data, &ports, &env).await;
    let token = client_token(&creds).await;
    quick_start(&creds, token["access_token"].as_str().unwrap()).await;
    track_and_read_back(&creds, token["access_token"].as_str().unwrap()).await;

    let bucket = S3Store::connect(s3.options("speech-objects"))
        .await
        .unwrap();
    let keys = bucket.list("acme/", None, 10).await.unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(keys[0].ends_with("/transcript.json"), "{keys:?}");
    let stored: Value =
        serde_json::from_slice(&bucket.get(&keys[0]).await.unwrap().unwrap()).unwrap();
    assert_eq!(
        stored["metadata"]["priority"], "high",
        "the PATCH reached the bucket"
    );
    assert!(
        walk(&data)
            .iter()
            .all(|(path, _)| !path.to_string_lossy().contains("objects/")),
        "no object on local disk"
    );
    let _ = std::fs::remove_dir_all(&data);
}

/// The README's quick start on the served platform: a call is added to the bootstrap folder with the
/// client-credentials token, found by search, and its metadata changed.
async fn quick_start(creds: &Value, token: &str) {
    let base = creds["base_url"].as_str().unwrap();
    let (org, folder) = (
        creds["organization"].as_str().unwrap(),
        creds["folder"].as_str().unwrap(),
    );
    for path in ["/healthz", "/readyz", "/openapi.json"] {
        let response = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "analytics {path}");
    }
    let call = serde_json::json!({
        "filename": "call-0001.wav", "datetime": "2026-11-20T10:15:00", "agent_id": "agent-7",
        "metadata": {"queue": "billing"},
        "utterances": [{"speaker": "client", "start": 0.5, "end": 3.2, "text": "my invoice is wrong"}]
    });
    let form = reqwest::multipart::Form::new()
        .text("token", token.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(call.to_string().into_bytes()).file_name("call.json"),
        );
    let added: Value = reqwest::Client::new()
        .post(format!("{base}/transcribe/acme/{org}/{folder}"))
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = added["tId"].as_str().expect("a call id").to_string();
    let mut found = Value::Null;
    for _ in 0..100 {
        found = reqwest::get(format!("{base}/search/acme/{org}?token={token}&q=invoice"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if found["total"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(found["hits"][0]["tId"], id.as_str(), "{found}");
    let changed: Value = reqwest::Client::new()
        .patch(format!("{base}/metadata/acme/{org}/{id}?token={token}"))
        .body(r#"{"priority": "high"}"#)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (changed["priority"].as_str(), changed["queue"].as_str()),
        (Some("high"), Some("billing"))
    );
}
