//! `/config`: companies, organizations and folders are created, replaced and read; folder records have
//! exactly the documented fields with their defaults; bad input is refused with a message and changes
//! nothing.

use serde_json::{json, Value};

use crate::support::*;

fn keys(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

async fn a_company_organization_and_folder_are_created_and_read(stack: Stack) {
    let world = World::new(stack).await;
    let company = world
        .send("POST", "/config/acme", Some(json!({"name": "Acme Inc."})))
        .await;
    assert_eq!(company.status, 200, "{}", company.text);
    assert_eq!(company.body["name"], "Acme Inc.");
    assert_eq!(company.body["status"], "OK");
    let again = world.send("POST", "/config/acme", Some(json!({}))).await;
    assert_eq!(again.status, 409, "POST does not replace");
    assert!(
        again.content_type.starts_with("text/html"),
        "{}",
        again.content_type
    );

    let org = world
        .send(
            "POST",
            "/config/acme/support",
            Some(json!({"timezone": "America/New_York"})),
        )
        .await;
    assert_eq!(org.status, 200, "{}", org.text);
    assert_eq!(org.body["timezone"], "America/New_York");

    let folder = world
        .send("POST", "/config/acme/support/inbox", Some(json!({})))
        .await;
    assert_eq!(folder.status, 200, "{}", folder.text);
    assert_eq!(
        keys(&folder.body),
        [
            "agentchan",
            "apps",
            "asroptions",
            "audiotype",
            "callback",
            "created",
            "custom_meta",
            "mode",
            "modelchan0",
            "modelchan1",
            "nspeakers",
            "purifyaudio",
            "purifytext",
            "servers",
            "status"
        ]
    );
    assert_eq!(folder.body["nspeakers"], 2);
    assert_eq!(folder.body["agentchan"], 0);
    assert_eq!(folder.body["status"], "OK");
    assert_eq!(folder.body["custom_meta"], json!([]));
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert_eq!(folder.body["created"], today);

    let read = world.send("GET", "/config/acme", None).await;
    assert_eq!(read.body["organizations"], json!(["support"]));
    let read = world.send("GET", "/config/acme/support", None).await;
    assert_eq!(read.body["folders"], json!(["inbox"]));
    assert_eq!(read.body["status"], "OK");
}

async fn put_replaces_and_a_record_read_back_is_accepted(stack: Stack) {
    let world = World::with_folder(stack).await;
    let path = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    let mut record = world.send("GET", &path, None).await.body;
    record["custom_meta"] = json!(["queue", "region", "priority"]);
    record["agentchan"] = json!(1);
    record["callback"] = json!({"url": "https://hooks.example.com/speech", "attempts": 5});
    let put = world.send("PUT", &path, Some(record.clone())).await;
    assert_eq!(put.status, 200, "{}", put.text);
    assert_eq!(world.send("GET", &path, None).await.body, record);

    // Omitted settings take their defaults again.
    let put = world
        .send("PUT", &path, Some(json!({"mode": "fast"})))
        .await;
    assert_eq!(put.body["agentchan"], 0);
    assert_eq!(put.body["custom_meta"], json!([]));
    assert_eq!(put.body["mode"], "fast");

    // An integer written with a zero fraction is that integer (JSON Schema counts 2.0 as one).
    let whole = json!({"nspeakers": 3.0, "agentchan": 1.0, "callback": {"attempts": 7.0}});
    let put = world.send("PUT", &path, Some(whole)).await;
    assert_eq!(put.status, 200, "{}", put.text);
    assert_eq!(
        (&put.body["nspeakers"], &put.body["agentchan"]),
        (&json!(3), &json!(1))
    );
    assert_eq!(put.body["callback"]["attempts"], 7);

    let org = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}"),
            Some(json!({"timezone": "Asia/Tokyo"})),
        )
        .await;
    assert_eq!(org.body["timezone"], "Asia/Tokyo");
}

async fn bad_input_is_refused_with_a_message_and_changes_nothing(stack: Stack) {
    let world = World::with_folder(stack).await;
    let path = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    let before = world.send("GET", &path, None).await.body;
    for (body, says) in [
        (json!({"nspeakers": 0}), "nspeakers"),
        (json!({"nspeakers": 2.5}), "nspeakers"),
        (json!({"callback": {"attempts": 1.5}}), "attempts"),
        (json!({"agentchan": 2}), "agentchan"),
        (json!({"custom_meta": ["tId"]}), "reserved"),
        (json!({"custom_meta": ["queue", "queue"]}), "twice"),
        (
            json!({"callback": {"url": "ftp://example.com"}}),
            "callback.url",
        ),
        (json!({"callback": {"retries": 3}}), "callback"),
        (json!({"colour": "blue"}), "colour"),
        (json!({"servers": "one"}), "servers"),
        (json!([["s"], 2, "call"]), "object"),
        (
            json!({"callback": ["https://hooks.example.com/x", 5]}),
            "callback",
        ),
    ] {
        let a = world.send("PUT", &path, Some(body.clone())).await;
        assert_eq!(a.status, 400, "{body}: {}", a.text);
        assert!(a.content_type.starts_with("text/html"));
        assert!(a.text.contains(says), "{body}: {}", a.text);
    }
    assert_eq!(world.send("GET", &path, None).await.body, before);

    let zone = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}"),
            Some(json!({"timezone": "Mars/Olympus"})),
        )
        .await;
    assert_eq!(zone.status, 400);
    assert!(zone.text.contains("IANA"), "{}", zone.text);
    let name = world
        .send(
            "PUT",
            &format!("/config/{COMPANY}/{ORG}/.hidden"),
            Some(json!({})),
        )
        .await;
    assert_eq!(name.status, 400, "{}", name.text);
    let dup = reqwest::Client::new()
        .put(world.url(&path, Some(&world.token)))
        .body(r#"{"mode": "a", "mode": "b"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(dup.status(), 400, "a key given twice");
    let escaped = world.send("PUT", &path, Some(json!({"<script>": 1}))).await;
    assert!(!escaped.text.contains("<script>"), "{}", escaped.text);
}

/// A `PUT` or `POST` without a body is a mistake (a client that lost its body), not a request for the
/// defaults: it is refused and changes nothing, on every record. `{}` asks for the defaults.
async fn a_missing_body_is_refused_and_changes_nothing(stack: Stack) {
    let world = World::with_folder(stack).await;
    let folder = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    world
        .send(
            "PUT",
            &folder,
            Some(json!({"nspeakers": 1, "apps": [], "custom_meta": ["queue"]})),
        )
        .await;
    let before = world.send("GET", &folder, None).await.body;
    let company = format!("/config/{COMPANY}");
    let company_before = world.send("GET", &company, None).await.body;
    for (method, path) in [
        ("PUT", folder.clone()),
        ("PUT", company.clone()),
        ("PUT", format!("/config/{COMPANY}/{ORG}")),
        ("POST", format!("/config/{COMPANY}/{ORG}/new-folder")),
    ] {
        for body in ["", "  \n"] {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            let a = read(
                reqwest::Client::new()
                    .request(method.clone(), world.url(&path, Some(&world.token)))
                    .body(body)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(a.status, 400, "{method} {path} {body:?}: {}", a.text);
            assert!(a.text.contains("empty"), "{}", a.text);
        }
    }
    assert_eq!(world.send("GET", &folder, None).await.body, before);
    assert_eq!(world.send("GET", &company, None).await.body, company_before);
    let new = world
        .send("GET", &format!("/config/{COMPANY}/{ORG}/new-folder"), None)
        .await;
    assert_eq!(new.status, 404, "{}", new.text);
    let defaults = world
        .send(
            "POST",
            &format!("/config/{COMPANY}/{ORG}/new-folder"),
            Some(json!({})),
        )
        .await;
    assert_eq!(defaults.status, 200, "{}", defaults.text);
}

async fn missing_parents_and_objects_read_as_not_found(stack: Stack) {
    let world = World::new(stack).await;
    let a = world.send("GET", "/config/acme", None).await;
    assert_eq!((a.status, a.text.as_str()), (404, "Folder not found: acme"));
    let a = world
        .send(
            "PUT",
            "/config/acme/support",
            Some(json!({"timezone": "UTC"})),
        )
        .await;
    assert_eq!((a.status, a.text.as_str()), (404, "Folder not found: acme"));
    world.create_folder(ORG, FOLDER, json!({})).await;
    let a = world.send("GET", "/config/acme/support/outbox", None).await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (404, "Folder not found: outbox")
    );
}

/// A folder's `callback.url` passes the address guard of callbacks given at upload when it is set: an
/// internal address is refused with 400 naming `callback.url`, and nothing changes. Loopback passes where
/// the operator allows it (as in the callback tests); a metadata service never does.
async fn a_folders_callback_address_passes_the_address_guard(stack: Stack) {
    let strict = World::with_folder(stack).await;
    let path = format!("/config/{COMPANY}/{ORG}/{FOLDER}");
    let before = strict.send("GET", &path, None).await.body;
    for (url, why) in [
        ("http://127.0.0.1:9/x", "loopback"),
        ("http://localhost:9/x", "loopback"),
        ("http://[::1]:9/x", "loopback"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "not a unicast internet address",
        ),
        ("http://[fd00:ec2::254]/x", "not a unicast internet address"),
        ("http://10.1.2.3/x", "private"),
    ] {
        let body = json!({"callback": {"url": url}});
        for (method, target) in [("PUT", path.clone()), ("POST", format!("{path}-new"))] {
            let a = strict.send(method, &target, Some(body.clone())).await;
            assert_eq!(a.status, 400, "{method} {url}: {}", a.text);
            assert!(a.content_type.starts_with("text/html"));
            assert!(a.text.starts_with("callback.url: "), "{url}: {}", a.text);
            assert!(a.text.contains(why), "{url}: {}", a.text);
        }
    }
    assert_eq!(strict.send("GET", &path, None).await.body, before);
    let a = strict.send("GET", &format!("{path}-new"), None).await;
    assert_eq!(a.status, 404, "{}", a.text);

    let open = World::with(stack, |c| c.callback_allow_loopback = true).await;
    open.create_folder(ORG, FOLDER, json!({})).await;
    let a = open
        .send(
            "PUT",
            &path,
            Some(json!({"callback": {"url": "http://127.0.0.1:9/x"}})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["callback"]["url"], "http://127.0.0.1:9/x");
    let a = open
        .send(
            "PUT",
            &path,
            Some(json!({"callback": {"url": "http://169.254.169.254/latest/meta-data/"}})),
        )
        .await;
    assert_eq!(a.status, 400, "{}", a.text);
    assert!(a.text.contains("callback.url"), "{}", a.text);
}

crate::stack_tests!(
    a_missing_body_is_refused_and_changes_nothing,
    a_folders_callback_address_passes_the_address_guard,
    a_company_organization_and_folder_are_created_and_read,
    put_replaces_and_a_record_read_back_is_accepted,
    bad_input_is_refused_with_a_message_and_changes_nothing,
    missing_parents_and_objects_read_as_not_found,
);
