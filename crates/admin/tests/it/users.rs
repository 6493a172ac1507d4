//! Users: the record of docs/admin-api.md, validation, replacement with ETags, deletion, login through the token
//! service, blocking, pagination and filters.

use std::collections::HashSet;

use directory::User;
use serde_json::{json, Value};

use crate::support::*;

const RECORD_KEYS: &[&str] = &[
    "_allowed",
    "_links",
    "_system_properties",
    "automatic_update",
    "company_account_id",
    "data-access",
    "email",
    "excluded_from_user_activity",
    "first_name",
    "last_name",
    "login_blocked",
    "phone",
    "roles",
    "salutation",
    "username",
];

const SYSTEM_KEYS: &[&str] = &[
    "created_by",
    "created_on",
    "failed_login_count",
    "last_login",
    "login_blocked_reason",
    "login_count",
    "modified_by",
    "modified_on",
    "password_last_emailed",
    "password_last_set",
    "password_not_set_reason",
    "status",
];

async fn the_record_has_every_spec_field_with_the_login_facts(backend: Backend) {
    let w = World::new(backend).await;
    let mut body = user_body("bob");
    body["password"] = json!("bob's long password");
    body["data-access"] = json!({
        "organization": [{"role": "viewer", "data_view": "all", "unit_group": "emea",
                          "unit_group_display_name": "EMEA"}],
        "segments": ["north", {"id": 7}],
    });
    let created = w.post("/users", body).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.etag(), "W/\"1\"");
    assert_eq!(created.header("location").unwrap(), "/admin/v1/users/bob");

    let record = w.get("/users/bob").await;
    assert_eq!(record.status, 200);
    // Every answer holding the record keeps its order of fields, username first.
    let mut renamed = record.body.clone();
    renamed["first_name"] = json!("Bobby");
    let replaced = w.put("/users/bob", renamed, &record.etag()).await;
    let listed = w.get("/users?limit=100").await;
    for (what, text) in [
        ("POST", &created.text),
        ("GET", &record.text),
        ("PUT", &replaced.text),
    ] {
        assert!(
            text.starts_with(r#"{"username":"bob","first_name":"#),
            "{what}: {text}"
        );
    }
    assert!(
        listed.text.starts_with(r#"{"items":[{"username":"#),
        "{}",
        listed.text
    );
    let record = w.get("/users/bob").await;
    let r = &record.body;
    assert_eq!(keys(r), RECORD_KEYS);
    assert_eq!(keys(&r["_system_properties"]), SYSTEM_KEYS);
    assert_eq!(keys(&r["roles"]), ["extra_roles", "primary_role"]);
    assert_eq!(keys(&r["data-access"]), ["organization", "segments"]);
    assert_eq!(r["roles"]["primary_role"], json!({"role": "Administrator"}));
    assert_eq!(r["roles"]["extra_roles"], json!([]));
    assert_eq!(
        r["data-access"]["organization"][0]["unit_group_display_name"],
        "EMEA"
    );
    assert_eq!(r["data-access"]["segments"][1], json!({"id": 7}));
    for nullable in ["salutation", "phone", "company_account_id", "_links"] {
        assert!(r[nullable].is_null(), "{nullable} present as null");
    }
    let sys = &r["_system_properties"];
    assert_eq!(sys["status"], "ACTIVE");
    assert_eq!(sys["created_by"], ROOT);
    assert_eq!(sys["modified_by"], ROOT);
    assert!(sys["created_on"].as_str().unwrap().ends_with('Z'));
    assert!(sys["password_last_set"].is_string());
    assert!(sys["password_not_set_reason"].is_null());
    assert!(sys["last_login"].is_null());
    assert_eq!(sys["login_count"], 0);
    assert_eq!(sys["failed_login_count"], 0);
    assert_eq!(r["_allowed"], json!(["GET", "PUT", "DELETE"]));
    assert_eq!(r["login_blocked"], false);
    assert!(
        !r.to_string().contains("argon2"),
        "no password hash in the record"
    );

    // Login facts come from the token service.
    let failed = code_flow(
        &w.auth,
        COMPANY,
        &w.client_id,
        &w.secret,
        "bob",
        "wrong password",
        &[],
    )
    .await;
    assert!(failed.is_err());
    let r = w.get("/users/bob").await.body;
    assert_eq!(r["_system_properties"]["failed_login_count"], 1);
    w.token_of("bob", "bob's long password").await;
    let r = w.get("/users/bob").await.body;
    assert_eq!(r["_system_properties"]["login_count"], 1);
    assert_eq!(r["_system_properties"]["failed_login_count"], 0);
    assert!(r["_system_properties"]["last_login"].is_string());

    // The caller may not delete itself, so DELETE is not allowed on its own record.
    let own = w.get("/users/root").await;
    assert_eq!(own.body["_allowed"], json!(["GET", "PUT"]));
    let refused = w.delete("/users/root", &own.etag()).await;
    assert_eq!(refused.status, 403);

    // A user created without a password says why it has none.
    let r = w.create_user(user_body("nopass")).await;
    assert!(r["_system_properties"]["password_last_set"].is_null());
    assert!(r["_system_properties"]["password_not_set_reason"].is_string());
}

async fn validation_errors_name_the_field(backend: Backend) {
    let w = World::new(backend).await;
    type Change = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Change, &str)> = vec![
        (
            "bad username",
            Box::new(|b| b["username"] = json!("bad name!")),
            "username",
        ),
        (
            "long username",
            Box::new(|b| b["username"] = json!("x".repeat(65))),
            "username",
        ),
        (
            "dots only",
            Box::new(|b| b["username"] = json!("..")),
            "username",
        ),
        (
            "a dot",
            Box::new(|b| b["username"] = json!(".")),
            "username",
        ),
        (
            "no username",
            Box::new(|b| {
                b.as_object_mut().unwrap().remove("username");
            }),
            "username",
        ),
        (
            "email",
            Box::new(|b| b["email"] = json!("not-an-address")),
            "email",
        ),
        (
            "status",
            Box::new(|b| b["status"] = json!("GONE")),
            "status",
        ),
        (
            "status in _system_properties",
            Box::new(|b| b["_system_properties"] = json!({"status": "DELETED"})),
            "_system_properties.status",
        ),
        (
            "status in _system_properties beside a valid one",
            Box::new(|b| {
                b["status"] = json!("ACTIVE");
                b["_system_properties"] = json!({"status": "DELETED"});
            }),
            "_system_properties.status",
        ),
        (
            "reason in _system_properties beside a valid one",
            Box::new(|b| {
                b["login_blocked_reason"] = json!("ok");
                b["_system_properties"] = json!({"login_blocked_reason": "a\u{202e}b"});
            }),
            "_system_properties.login_blocked_reason",
        ),
        (
            "no primary role",
            Box::new(|b| b["roles"] = json!({"extra_roles": []})),
            "roles.primary_role.role",
        ),
        (
            "unknown field",
            Box::new(|b| b["favourite_colour"] = json!("blue")),
            "favourite_colour",
        ),
        (
            "short password",
            Box::new(|b| b["password"] = json!("short")),
            "password",
        ),
        (
            "boolean",
            Box::new(|b| b["automatic_update"] = json!("yes")),
            "automatic_update",
        ),
        (
            "organization entry",
            Box::new(|b| b["data-access"] = json!({"organization": [{"role": "x"}]})),
            "data-access.organization[0].data_view",
        ),
        (
            "first name type",
            Box::new(|b| b["first_name"] = json!(42)),
            "first_name",
        ),
    ];
    for (what, change, field) in cases {
        let mut body = user_body("valid");
        change(&mut body);
        let a = w.post("/users", body).await;
        assert_eq!(a.status, 400, "{what}: {:?}", a.body);
        assert_eq!(a.code(), "invalid_field", "{what}");
        assert_eq!(a.field(), field, "{what}: {:?}", a.body);
    }
    // A role the company does not have is not found (a well-formed name no schema can know to be
    // wrong), the field naming where it was given.
    for (what, roles, field) in [
        (
            "unknown primary role",
            json!({"primary_role": {"role": "Nope"}}),
            "roles.primary_role.role",
        ),
        (
            "unknown extra role",
            json!({"primary_role": {"role": "Administrator"}, "extra_roles": ["Nope"]}),
            "roles.extra_roles[0]",
        ),
    ] {
        let mut body = user_body("valid");
        body["roles"] = roles;
        let a = w.post("/users", body).await;
        assert_eq!(
            (a.status, a.code()),
            (404, "not_found"),
            "{what}: {:?}",
            a.body
        );
        assert_eq!(a.field(), field, "{what}: {:?}", a.body);
    }
    w.create_user(user_body("valid")).await;
    // Nor in another case: it would pass for the first in lists and the audit trail.
    let alike = w.post("/users", user_body("Valid")).await;
    assert_eq!((alike.status, alike.code()), (409, "already_exists"));
    assert!(
        alike.body["message"]
            .as_str()
            .unwrap()
            .contains("user valid, which differs from Valid only in case"),
        "{:?}",
        alike.body
    );
    assert_eq!(w.get("/users/Valid").await.status, 404);
    let again = w.post("/users", user_body("valid")).await;
    assert_eq!(again.status, 409);
    assert_eq!(again.code(), "already_exists");
    assert!(
        again.body["message"]
            .as_str()
            .unwrap()
            .ends_with("already exists"),
        "{:?}",
        again.body
    );
    let not_json = w.post("/users", json!(["an array"])).await;
    assert_eq!(not_json.status, 400);
}

async fn replace_and_delete_need_the_current_etag(backend: Backend) {
    let w = World::new(backend).await;
    w.create_user(user_body("carol")).await;
    let read = w.get("/users/carol").await;
    let etag = read.etag();
    assert_eq!(etag, "W/\"1\"");

    // A GET result can be sent back as it is, with changes.
    let mut record = read.body.clone();
    record["first_name"] = json!("Caroline");
    record["phone"] = json!("+44 20 7946 0000");

    let none = call(
        &w.admin,
        "PUT",
        "/users/carol",
        Some(&w.token),
        Some(record.clone()),
        None,
    )
    .await;
    assert_eq!(none.status, 428, "{:?}", none.body);
    assert_eq!(none.code(), "precondition_required");
    let star = w.put("/users/carol", record.clone(), "*").await;
    assert_eq!(star.status, 428);

    // The roles given as an array of their fields: refused, naming the field, whatever the If-Match (a
    // body refused on its own is 400 before any precondition, RFC 9110 section 13.2.1).
    let mut bad_record = record.clone();
    bad_record["roles"] = json!([{"role": "Administrator"}, []]);
    for if_match in [etag.as_str(), "*", "W/\"9\""] {
        let bad = w.put("/users/carol", bad_record.clone(), if_match).await;
        assert_eq!(bad.status, 400, "{if_match}");
        assert_eq!(bad.field(), "roles");
    }

    let first = w.put("/users/carol", record.clone(), &etag).await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.etag(), "W/\"2\"");
    assert_eq!(first.body["first_name"], "Caroline");
    assert_eq!(first.body["phone"], "+44 20 7946 0000");

    // A second admin who read version 1 does not overwrite blindly.
    let mut theirs = read.body.clone();
    theirs["last_name"] = json!("Other");
    let stale = w.put("/users/carol", theirs, &etag).await;
    assert_eq!(stale.status, 412, "{:?}", stale.body);
    assert_eq!(stale.code(), "precondition_failed");
    assert_eq!(w.get("/users/carol").await.body["last_name"], "carol");

    // PUT replaces: what is left out takes its default.
    let minimal = json!({"roles": {"primary_role": {"role": "Administrator"}}});
    let replaced = w.put("/users/carol", minimal, &first.etag()).await;
    assert_eq!(replaced.status, 200, "{:?}", replaced.body);
    assert!(replaced.body["phone"].is_null());
    assert!(replaced.body["email"].is_null());
    assert_eq!(replaced.body["first_name"], "");

    let renamed = w
        .put(
            "/users/carol",
            json!({"username": "caz", "roles": {"primary_role": {"role": "Administrator"}}}),
            &replaced.etag(),
        )
        .await;
    assert_eq!(renamed.status, 400);
    assert_eq!(renamed.field(), "username");

    let missing = w.put("/users/nobody", record, "W/\"1\"").await;
    assert_eq!(missing.status, 404);

    let no_tag = call(
        &w.admin,
        "DELETE",
        "/users/carol",
        Some(&w.token),
        None,
        None,
    )
    .await;
    assert_eq!(no_tag.status, 428);
    assert_eq!(w.delete("/users/carol", &etag).await.status, 412);
    let deleted = w.delete("/users/carol", &replaced.etag()).await;
    assert_eq!(deleted.status, 204);
    assert_eq!(w.get("/users/carol").await.status, 404);
    assert_eq!(w.delete("/users/carol", &replaced.etag()).await.status, 404);
}

async fn a_created_user_logs_in_and_blocking_stops_logins_and_refresh_tokens(backend: Backend) {
    let w = World::new(backend).await;
    let mut body = user_body("dave");
    body["password"] = json!("dave's long password");
    body["api_access"] = json!(true);
    w.create_user(body).await;

    let tokens = code_flow(
        &w.auth,
        COMPANY,
        &w.client_id,
        &w.secret,
        "dave",
        "dave's long password",
        &[("scope", "refreshToken")],
    )
    .await
    .expect("dave logs in");
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let dave_token = tokens["access_token"].as_str().unwrap().to_string();
    let own = call(
        &w.admin,
        "GET",
        "/users/dave",
        Some(&dave_token),
        None,
        None,
    )
    .await;
    assert_eq!(own.status, 200, "dave has API access: {:?}", own.body);

    let refreshed = refresh_grant(&w, &refresh).await;
    assert_eq!(refreshed.status, 200, "{:?}", refreshed.body);
    let refresh = refreshed.body["refresh_token"]
        .as_str()
        .unwrap()
        .to_string();

    let mut record = own.body.clone();
    record["login_blocked"] = json!(true);
    record["_system_properties"]["login_blocked_reason"] = json!("left the company");
    let blocked = w.put("/users/dave", record.clone(), &own.etag()).await;
    assert_eq!(blocked.status, 200, "{:?}", blocked.body);
    assert_eq!(blocked.body["login_blocked"], true);
    assert_eq!(
        blocked.body["_system_properties"]["login_blocked_reason"],
        "left the company"
    );

    let refused = refresh_grant(&w, &refresh).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.body["error"], "invalid_grant");
    assert!(
        code_flow(
            &w.auth,
            COMPANY,
            &w.client_id,
            &w.secret,
            "dave",
            "dave's long password",
            &[]
        )
        .await
        .is_err(),
        "a blocked user cannot log in"
    );
    let api = call(
        &w.admin,
        "GET",
        "/users/dave",
        Some(&dave_token),
        None,
        None,
    )
    .await;
    // The refused refresh revoked the family, with the access tokens issued along it.
    assert_eq!(
        (api.status, api.code()),
        (401, "invalid_token"),
        "a blocked account's token no longer works: {:?}",
        api.body
    );

    // Unblocking does not bring the old refresh tokens back: they were revoked.
    record["login_blocked"] = json!(false);
    let unblocked = w.put("/users/dave", record, &blocked.etag()).await;
    assert_eq!(unblocked.status, 200);
    let still = refresh_grant(&w, &refresh).await;
    assert_eq!(still.status, 400, "{:?}", still.body);
    w.token_of("dave", "dave's long password").await;

    // A password set by PUT is the one that works.
    let mut record = unblocked.body.clone();
    record["password"] = json!("a brand new password");
    let changed = w.put("/users/dave", record, &unblocked.etag()).await;
    assert_eq!(changed.status, 200);
    w.token_of("dave", "a brand new password").await;
}

async fn refresh_grant(w: &World, refresh: &str) -> Answer {
    let response = reqwest::Client::new()
        .post(w.auth.token_url(COMPANY))
        .form(&[
            ("grant_type", "refresh_token"),
            ("client_id", w.client_id.as_str()),
            ("client_secret", w.secret.as_str()),
            ("refresh_token", refresh),
        ])
        .send()
        .await
        .unwrap();
    read(response).await
}

async fn seed_users(w: &World, names: impl IntoIterator<Item = String>) {
    let db = &w.auth.service.state.db;
    for name in names {
        insert_user(db, &User::new(COMPANY, &name, "Administrator", "test")).await;
    }
}

fn usernames(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap().to_string())
        .collect()
}

async fn limits_and_cursors_are_checked(backend: Backend) {
    let w = World::new(backend).await;
    seed_users(&w, (0..30).map(|i| format!("user{i:02}"))).await;
    for bad in ["101", "0", "-1", "ten", "1000"] {
        let a = w.get(&format!("/users?limit={bad}")).await;
        assert_eq!(a.status, 400, "limit={bad}");
        assert_eq!(a.code(), "invalid_limit");
        assert_eq!(a.field(), "limit");
    }
    let first = w.get("/users").await;
    assert_eq!(first.status, 200);
    assert_eq!(keys(&first.body), ["items", "limit", "next_cursor"]);
    assert_eq!(first.body["limit"], 25, "the default page size");
    assert_eq!(first.body["items"].as_array().unwrap().len(), 25);
    let cursor = first.body["next_cursor"].as_str().unwrap().to_string();
    let rest = w.get(&format!("/users?cursor={cursor}&limit=100")).await;
    assert_eq!(rest.body["items"].as_array().unwrap().len(), 6, "31 users");
    assert!(rest.body["next_cursor"].is_null());
    let max = w.get("/users?limit=100").await;
    assert_eq!(max.body["items"].as_array().unwrap().len(), 31);

    // Sent empty, a cursor is left out (as every other parameter): the first page.
    let empty = w.get("/users?cursor=&limit=100").await;
    assert_eq!(empty.status, 200, "{:?}", empty.body);
    assert_eq!(empty.body["items"].as_array().unwrap().len(), 31);

    let garbage = w.get("/users?cursor=zzz").await;
    assert_eq!((garbage.status, garbage.code()), (400, "invalid_cursor"));
    let odd = w.get("/users?cursor=abc").await;
    assert_eq!(
        (odd.status, odd.code()),
        (400, "invalid_cursor"),
        "odd length"
    );
    // A cursor is a position in the order: one of a key never stored starts after where it would be.
    let between = w
        .get(&format!(
            "/users?limit=100&cursor={}",
            admin::query::encode_cursor("user15x")
        ))
        .await;
    assert_eq!(between.status, 200, "{:?}", between.body);
    let names: Vec<&str> = between.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"user16"), "{names:?}");
    assert_eq!(names.len(), 14, "{names:?}");
    let unknown = w.get("/users?sort=desc").await;
    assert_eq!((unknown.status, unknown.field()), (400, "sort"));
    let twice = w.get("/users?limit=2&limit=3").await;
    assert_eq!((twice.status, twice.field()), (400, "limit"));
}

async fn pages_neither_skip_nor_repeat_while_users_come_and_go(backend: Backend) {
    let w = World::new(backend).await;
    seed_users(&w, (0..40).map(|i| format!("m{i:02}"))).await;
    let mut stable: HashSet<String> = (0..40).map(|i| format!("m{i:02}")).collect();
    stable.insert(ROOT.to_string());

    // Meanwhile another writer keeps inserting users all over the key space.
    let db = w.auth.service.state.db.clone();
    let writer = tokio::spawn(async move {
        for i in 0..60 {
            for prefix in ["a", "m", "z"] {
                let name = format!("{prefix}{i:02}-new");
                insert_user(&db, &User::new(COMPANY, &name, "Administrator", "test")).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        }
    });

    let mut seen: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut deleted_unseen = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/users?limit=7&cursor={c}"),
            None => "/users?limit=7".to_string(),
        };
        let page = w.get(&path).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        seen.extend(usernames(&page.body));
        // Delete a stable user that is still ahead of the cursor: it must not show up later.
        let ahead = stable
            .iter()
            .filter(|n| n.starts_with('m') && !seen.contains(n))
            .max()
            .cloned();
        if let Some(name) = ahead {
            assert!(delete_user(&w.auth.service.state.db, COMPANY, &name).await);
            stable.remove(&name);
            deleted_unseen += 1;
            seen.retain(|n| n != &name);
            assert!(!seen.contains(&name));
            // Remember it so a later appearance is caught.
            seen.push(format!("deleted:{name}"));
        }
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    writer.await.unwrap();

    let listed: Vec<&String> = seen.iter().filter(|n| !n.starts_with("deleted:")).collect();
    let unique: HashSet<&String> = listed.iter().copied().collect();
    assert_eq!(unique.len(), listed.len(), "no user is listed twice");
    for name in &stable {
        assert!(unique.contains(name), "{name} was skipped");
    }
    for gone in seen.iter().filter_map(|n| n.strip_prefix("deleted:")) {
        assert!(
            !unique.contains(&gone.to_string()),
            "{gone} was deleted before its page and must not be listed"
        );
    }
    assert!(deleted_unseen > 0);
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len());
}

async fn users_filter_by_status_and_role(backend: Backend) {
    let w = World::new(backend).await;
    let role = w
        .post(
            "/roles",
            json!({"name": "Team_Lead", "permissions": ["Manage Users"]}),
        )
        .await;
    assert_eq!(role.status, 201, "{:?}", role.body);
    let mut s1 = user_body("s1");
    s1["roles"] = json!({"primary_role": {"role": "Team_Lead"}});
    w.create_user(s1).await;
    let mut s2 = user_body("s2");
    s2["roles"] = json!({"primary_role": {"role": "Administrator"}, "extra_roles": ["Team_Lead"]});
    s2["status"] = json!("INACTIVE");
    w.create_user(s2).await;
    w.create_user(user_body("plain")).await;
    // A role whose name matches Team_Lead as a LIKE pattern must not match it.
    w.post("/roles", json!({"name": "TeamXLead"})).await;

    let by_role = w.get("/users?role=Team_Lead").await;
    assert_eq!(usernames(&by_role.body), ["s1", "s2"]);
    let inactive = w.get("/users?status=INACTIVE").await;
    assert_eq!(usernames(&inactive.body), ["s2"]);
    assert_eq!(
        inactive.body["items"][0]["_system_properties"]["status"],
        "INACTIVE"
    );
    let both = w.get("/users?status=ACTIVE&role=Team_Lead").await;
    assert_eq!(usernames(&both.body), ["s1"]);
    let none = w.get("/users?role=TeamXLead").await;
    assert!(usernames(&none.body).is_empty());
    let bad = w.get("/users?status=ASLEEP").await;
    assert_eq!((bad.status, bad.field()), (400, "status"));
}

/// Names differing only in case, created at the same instant: one user, every other request a 409 (the
/// check before the insert is serialized per name, so two requests cannot both pass it).
async fn names_alike_created_at_once_give_one_user(backend: Backend) {
    let w = World::new(backend).await;
    let names = [
        "burst", "Burst", "BURST", "bUrst", "buRst", "burSt", "bursT", "BUrst", "bURST", "BurSt",
    ];
    let answers =
        futures_util::future::join_all(names.iter().map(|name| w.post("/users", user_body(name))))
            .await;
    let created: Vec<_> = answers.iter().filter(|a| a.status == 201).collect();
    assert_eq!(
        created.len(),
        1,
        "{:?}",
        answers.iter().map(|a| a.status).collect::<Vec<_>>()
    );
    for a in answers.iter().filter(|a| a.status != 201) {
        assert_eq!(
            (a.status, a.code()),
            (409, "already_exists"),
            "{:?}",
            a.body
        );
    }
}

/// The roles are a set: a role named again, as extra beside the primary or twice among the extras in
/// either spelling, counts once, on creation and on replacement.
async fn a_role_named_again_counts_once(backend: Backend) {
    let w = World::new(backend).await;
    assert_eq!(
        w.post("/roles", json!({"name": "Auditor"})).await.status,
        201
    );
    let mut body = user_body("rita");
    body["roles"] = json!({"primary_role": {"role": "Administrator"},
        "extra_roles": ["Administrator", "Auditor", {"role": "Auditor"}, {"role": "Administrator"}]});
    let created = w.create_user(body.clone()).await;
    let expected =
        json!({"primary_role": {"role": "Administrator"}, "extra_roles": [{"role": "Auditor"}]});
    assert_eq!(created["roles"], expected);

    body["roles"]["primary_role"] = json!({"role": "Auditor"});
    let read = w.get("/users/rita").await;
    let replaced = w.put("/users/rita", body, &read.etag()).await;
    assert_eq!(replaced.status, 200, "{:?}", replaced.body);
    assert_eq!(
        replaced.body["roles"],
        json!({"primary_role": {"role": "Auditor"}, "extra_roles": [{"role": "Administrator"}]})
    );
    assert_eq!(
        w.get("/users/rita").await.body["roles"],
        replaced.body["roles"]
    );
}

common::backend_tests!(
    a_role_named_again_counts_once,
    names_alike_created_at_once_give_one_user,
    the_record_has_every_spec_field_with_the_login_facts,
    validation_errors_name_the_field,
    replace_and_delete_need_the_current_etag,
    a_created_user_logs_in_and_blocking_stops_logins_and_refresh_tokens,
    limits_and_cursors_are_checked,
    pages_neither_skip_nor_repeat_while_users_come_and_go,
    users_filter_by_status_and_role,
);
