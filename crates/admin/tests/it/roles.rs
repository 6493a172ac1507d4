//! Roles: create, read, replace and delete with ETags, validation, pagination and filters, and the
//! permissions they grant taking effect at once.

use std::collections::HashSet;

use serde_json::json;

use crate::support::*;

async fn roles_are_managed_with_etags(backend: Backend) {
    let w = World::new(backend).await;
    let created = w
        .post(
            "/roles",
            json!({"name": "Supervisor", "description": "Team supervisors",
                   "permissions": ["Manage Users"]}),
        )
        .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.etag(), "W/\"1\"");
    assert_eq!(
        created.header("location").unwrap(),
        "/admin/v1/roles/Supervisor"
    );
    assert_eq!(
        keys(&created.body),
        [
            "_allowed",
            "_system_properties",
            "description",
            "name",
            "permissions"
        ]
    );

    let read = w.get("/roles/Supervisor").await;
    assert_eq!(read.status, 200);
    assert_eq!(read.body["permissions"], json!(["Manage Users"]));
    assert_eq!(read.body["_system_properties"]["created_by"], ROOT);

    let mut body = read.body.clone();
    body["permissions"] = json!(["Manage Users", "Manage Roles", "Manage Clients"]);
    let none = call(
        &w.admin,
        "PUT",
        "/roles/Supervisor",
        Some(&w.token),
        Some(body.clone()),
        None,
    )
    .await;
    assert_eq!(none.status, 428);
    assert_eq!(
        w.put("/roles/Supervisor", body.clone(), "W/\"7\"")
            .await
            .status,
        412
    );
    let replaced = w.put("/roles/Supervisor", body.clone(), &read.etag()).await;
    assert_eq!(replaced.status, 200, "{:?}", replaced.body);
    assert_eq!(replaced.etag(), "W/\"2\"");
    assert_eq!(replaced.body["permissions"].as_array().unwrap().len(), 3);
    assert_eq!(
        w.put("/roles/Supervisor", body.clone(), &read.etag())
            .await
            .status,
        412,
        "the first version is stale now"
    );

    let mut renamed = body.clone();
    renamed["name"] = json!("Boss");
    let r = w.put("/roles/Supervisor", renamed, &replaced.etag()).await;
    assert_eq!((r.status, r.field()), (400, "name"));

    for (bad, field) in [
        (json!({"name": "Bad\"Name"}), "name"),
        (json!({"name": " padded"}), "name"),
        (json!({"name": "x".repeat(65)}), "name"),
        (json!({"description": "no name"}), "name"),
        (
            json!({"name": "Ok", "permissions": ["Manage Users", "Fly"]}),
            "permissions[1]",
        ),
        (
            json!({"name": "Ok", "permissions": "Manage Users"}),
            "permissions",
        ),
        (json!({"name": "Ok", "colour": "red"}), "colour"),
    ] {
        let a = w.post("/roles", bad.clone()).await;
        assert_eq!(a.status, 400, "{bad}: {:?}", a.body);
        assert_eq!(a.field(), field, "{bad}");
    }
    let dup = w.post("/roles", json!({"name": "Supervisor"})).await;
    assert_eq!((dup.status, dup.code()), (409, "already_exists"));

    // A role someone holds cannot be deleted.
    let mut user = user_body("sam");
    user["roles"] =
        json!({"primary_role": {"role": "Administrator"}, "extra_roles": ["Supervisor"]});
    w.create_user(user).await;
    let in_use = w.delete("/roles/Supervisor", &replaced.etag()).await;
    assert_eq!((in_use.status, in_use.code()), (409, "in_use"));
    let sam = w.get("/users/sam").await;
    assert_eq!(w.delete("/users/sam", &sam.etag()).await.status, 204);

    assert_eq!(w.delete("/roles/Supervisor", "W/\"1\"").await.status, 412);
    assert_eq!(
        w.delete("/roles/Supervisor", &replaced.etag()).await.status,
        204
    );
    assert_eq!(w.get("/roles/Supervisor").await.status, 404);

    // Names with spaces travel percent-encoded.
    let spaced = w.post("/roles", json!({"name": "Team Lead"})).await;
    assert_eq!(spaced.status, 201);
    assert_eq!(
        spaced.header("location").unwrap(),
        "/admin/v1/roles/Team%20Lead"
    );
    assert_eq!(w.get("/roles/Team%20Lead").await.status, 200);
}

async fn roles_page_and_filter(backend: Backend) {
    let w = World::new(backend).await;
    for i in 0..12 {
        let a = w
            .post("/roles", json!({"name": format!("role-{i:02}")}))
            .await;
        assert_eq!(a.status, 201);
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/roles?limit=5&cursor={c}"),
            None => "/roles?limit=5".into(),
        };
        let page = w.get(&path).await;
        assert_eq!(page.status, 200, "{:?}", page.body);
        assert!(page.body["items"].as_array().unwrap().len() <= 5);
        for r in page.body["items"].as_array().unwrap() {
            seen.push(r["name"].as_str().unwrap().to_string());
        }
        // A role inserted behind the cursor does not show; one ahead of it does.
        if cursor.is_none() {
            w.post("/roles", json!({"name": "AAA-late"})).await;
            w.post("/roles", json!({"name": "zzz-late"})).await;
        }
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no role twice: {seen:?}");
    assert_eq!(seen.len(), 14, "12 + Administrator + zzz-late: {seen:?}");
    assert!(seen.contains(&"zzz-late".to_string()));

    let limit = w.get("/roles?limit=101").await;
    assert_eq!(
        (limit.status, limit.code(), limit.field()),
        (400, "invalid_limit", "limit")
    );

    let named = w.get("/roles?role=role-03").await;
    let names: Vec<&str> = named.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["role-03"]);

    // status: roles held by at least one user with that status.
    let mut user = user_body("idle");
    user["roles"] =
        json!({"primary_role": {"role": "role-05"}, "extra_roles": [{"role": "role-07"}]});
    user["status"] = json!("INACTIVE");
    w.create_user(user).await;
    let held = w.get("/roles?status=INACTIVE").await;
    let names: Vec<&str> = held.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["role-05", "role-07"]);
    let active = w.get("/roles?status=ACTIVE").await;
    assert_eq!(active.body["items"][0]["name"], "Administrator");
    assert_eq!(active.body["items"].as_array().unwrap().len(), 1);
    let bad = w.get("/roles?status=maybe").await;
    assert_eq!((bad.status, bad.field()), (400, "status"));
}

async fn permissions_of_roles_decide_what_a_caller_may_do(backend: Backend) {
    let w = World::new(backend).await;
    let role = w
        .post(
            "/roles",
            json!({"name": "UserManager", "permissions": ["Manage Users"]}),
        )
        .await;
    assert_eq!(role.status, 201);
    let mut body = user_body("ursula");
    body["roles"] = json!({"primary_role": {"role": "UserManager"}});
    body["password"] = json!("ursula's long password");
    body["api_access"] = json!(true);
    w.create_user(body).await;
    let token = w.token_of("ursula", "ursula's long password").await;
    let as_ursula = |method: &'static str, path: &'static str| {
        let token = token.clone();
        let admin = &w.admin;
        async move { call(admin, method, path, Some(&token), None, None).await }
    };

    assert_eq!(as_ursula("GET", "/users").await.status, 200);
    assert_eq!(as_ursula("GET", "/users/root").await.status, 200);
    for path in ["/roles", "/roles/Administrator", "/clients", "/audit"] {
        let a = as_ursula("GET", path).await;
        assert_eq!((a.status, a.code()), (403, "forbidden"), "{path}");
    }

    // Granting Manage Roles takes effect on the next request.
    let mut role = w.get("/roles/UserManager").await;
    role.body["permissions"] = json!(["Manage Users", "Manage Roles"]);
    let etag = role.etag();
    assert_eq!(
        w.put("/roles/UserManager", role.body.clone(), &etag)
            .await
            .status,
        200
    );
    assert_eq!(as_ursula("GET", "/roles").await.status, 200);

    // An extra role adds its permissions.
    w.post(
        "/roles",
        json!({"name": "Auditor", "permissions": ["View Audit Log"]}),
    )
    .await;
    let user = w.get("/users/ursula").await;
    let mut record = user.body.clone();
    record["roles"]["extra_roles"] = json!(["Auditor"]);
    assert_eq!(
        w.put("/users/ursula", record, &user.etag()).await.status,
        200
    );
    assert_eq!(as_ursula("GET", "/audit").await.status, 200);
    assert_eq!(as_ursula("GET", "/clients").await.status, 403);
}

common::backend_tests!(
    roles_are_managed_with_etags,
    roles_page_and_filter,
    permissions_of_roles_decide_what_a_caller_may_do,
);
