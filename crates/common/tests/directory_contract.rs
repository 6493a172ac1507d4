//! The directory store's contract, run against both adapters: what one backend does, the other does too.

use chrono::Utc;
use common::db::{StoreError, DIRECTORY_MIGRATIONS};
use common::directory::{
    grants, new_client, new_company, new_role, open_directory, permissions, ClientSpec,
    DirectoryStore, User, UserFilter,
};
use common::secrets::SecretKey;
use common::testing::{Backend, TestDb};

async fn store(backend: Backend) -> (TestDb, std::sync::Arc<dyn DirectoryStore>) {
    let db = TestDb::new(backend).await;
    db.db
        .migrate(&DIRECTORY_MIGRATIONS)
        .await
        .expect("migrations apply");
    db.db
        .migrate(&DIRECTORY_MIGRATIONS)
        .await
        .expect("migrations are idempotent");
    let store = open_directory(&db.db);
    store
        .ensure_company(&new_company("acme", "Acme"))
        .await
        .unwrap();
    store
        .ensure_company(&new_company("globex", "Globex"))
        .await
        .unwrap();
    (db, store)
}

async fn companies_are_created_once(backend: Backend) {
    let (_db, store) = store(backend).await;
    assert!(!store
        .ensure_company(&new_company("acme", "Other name"))
        .await
        .unwrap());
    assert_eq!(
        store.get_company("acme").await.unwrap().unwrap().name,
        "Acme"
    );
    assert!(store.get_company("initech").await.unwrap().is_none());
}

async fn users_round_trip_every_field(backend: Backend) {
    let (_db, store) = store(backend).await;
    let mut user = User::new("acme", "ada", "Analyst", "tester");
    user.email = Some("ada@example.com".into());
    user.extra_roles = vec!["Auditor".into()];
    user.data_access.segments = vec![serde_json::json!({"name": "north"})];
    user.links = Some(serde_json::json!({"self": "/admin/v1/users/ada"}));
    user.password_hash = Some("$argon2id$v=19$m=19456,t=2,p=1$abc$def".into());
    store.insert_user(&user).await.unwrap();
    let read = store.get_user("acme", "ada").await.unwrap().unwrap();
    assert_eq!(read.id, user.id);
    assert_eq!(read.email, user.email);
    assert_eq!(read.extra_roles, user.extra_roles);
    assert_eq!(read.data_access, user.data_access);
    assert_eq!(read.links, user.links);
    assert_eq!(read.password_hash, user.password_hash);
    assert_eq!(
        read.created_on.timestamp_micros(),
        user.created_on.timestamp_micros()
    );
    assert_eq!(
        store
            .get_user_by_id("acme", &user.id)
            .await
            .unwrap()
            .unwrap()
            .username,
        "ada"
    );
    assert!(
        store.get_user("globex", "ada").await.unwrap().is_none(),
        "users belong to one company"
    );
    assert!(store
        .get_user_by_id("globex", &user.id)
        .await
        .unwrap()
        .is_none());

    let duplicate = User::new("acme", "ada", "Analyst", "tester");
    assert!(matches!(
        store.insert_user(&duplicate).await,
        Err(StoreError::Conflict(_))
    ));
    let same_name_elsewhere = User::new("globex", "ada", "Analyst", "tester");
    store
        .insert_user(&same_name_elsewhere)
        .await
        .expect("usernames are unique per company only");
}

async fn updates_check_the_version(backend: Backend) {
    let (_db, store) = store(backend).await;
    let user = User::new("acme", "bob", "Analyst", "tester");
    store.insert_user(&user).await.unwrap();
    let mut first = store.get_user("acme", "bob").await.unwrap().unwrap();
    let mut second = first.clone();
    first.first_name = "Robert".into();
    first.version += 1;
    store.update_user(&first).await.unwrap();
    second.first_name = "Bobby".into();
    second.version += 1;
    assert!(
        matches!(store.update_user(&second).await, Err(StoreError::Stale)),
        "a stale write is refused"
    );
    let read = store.get_user("acme", "bob").await.unwrap().unwrap();
    assert_eq!((read.first_name.as_str(), read.version), ("Robert", 2));
}

async fn login_facts_count_and_lock(backend: Backend) {
    let (_db, store) = store(backend).await;
    let user = User::new("acme", "cy", "Analyst", "tester");
    store.insert_user(&user).await.unwrap();
    for _ in 0..2 {
        store
            .record_login_failure("acme", &user.id, 0, 3, 1_000)
            .await
            .unwrap();
    }
    let read = store.get_user("acme", "cy").await.unwrap().unwrap();
    assert_eq!((read.failed_login_count, read.locked_until_ms), (2, None));
    store
        .record_login_failure("acme", &user.id, 0, 3, 1_000)
        .await
        .unwrap();
    let read = store.get_user("acme", "cy").await.unwrap().unwrap();
    assert_eq!(
        (read.failed_login_count, read.locked_until_ms),
        (3, Some(1_000)),
        "the third failure locks"
    );
    store
        .record_login_failure("acme", &user.id, 500, 3, 9_000)
        .await
        .unwrap();
    let read = store.get_user("acme", "cy").await.unwrap().unwrap();
    assert_eq!(
        (read.failed_login_count, read.locked_until_ms),
        (4, Some(9_000)),
        "failing while locked extends it"
    );
    store
        .record_login_failure("acme", &user.id, 10_000, 3, 20_000)
        .await
        .unwrap();
    let read = store.get_user("acme", "cy").await.unwrap().unwrap();
    assert_eq!(
        (read.failed_login_count, read.locked_until_ms),
        (1, None),
        "after the lock the count starts afresh"
    );
    for _ in 0..2 {
        store
            .record_login_failure("acme", &user.id, 10_000, 3, 20_000)
            .await
            .unwrap();
    }
    let at = common::db::now();
    store
        .record_login_success("acme", &user.id, at)
        .await
        .unwrap();
    let read = store.get_user("acme", "cy").await.unwrap().unwrap();
    assert_eq!(
        (
            read.failed_login_count,
            read.locked_until_ms,
            read.login_count
        ),
        (0, None, 1)
    );
    assert_eq!(
        read.last_login.unwrap().timestamp_micros(),
        at.timestamp_micros()
    );
    store
        .set_password("acme", &user.id, "hash", at)
        .await
        .unwrap();
    assert_eq!(
        store
            .get_user("acme", "cy")
            .await
            .unwrap()
            .unwrap()
            .password_hash
            .as_deref(),
        Some("hash")
    );
}

async fn listings_are_ordered_filtered_and_resume_after_a_key(backend: Backend) {
    let (_db, store) = store(backend).await;
    for (name, role, status) in [
        ("dee", "Analyst", "ACTIVE"),
        ("al", "Admin", "ACTIVE"),
        ("cat", "Analyst", "INACTIVE"),
    ] {
        let mut user = User::new("acme", name, role, "tester");
        user.status = status.into();
        if name == "al" {
            user.extra_roles = vec!["Analyst".into(), "Analyst_x".into()];
        }
        store.insert_user(&user).await.unwrap();
    }
    store
        .insert_user(&User::new("globex", "bea", "Analyst", "tester"))
        .await
        .unwrap();
    let names = |users: Vec<User>| users.into_iter().map(|u| u.username).collect::<Vec<_>>();
    let all = UserFilter::default();
    assert_eq!(
        names(store.list_users("acme", &all, None, 10).await.unwrap()),
        ["al", "cat", "dee"]
    );
    assert_eq!(
        names(store.list_users("acme", &all, Some("al"), 1).await.unwrap()),
        ["cat"]
    );
    let active = UserFilter {
        status: Some("ACTIVE".into()),
        role: None,
    };
    assert_eq!(
        names(store.list_users("acme", &active, None, 10).await.unwrap()),
        ["al", "dee"]
    );
    let analysts = UserFilter {
        status: None,
        role: Some("Analyst".into()),
    };
    assert_eq!(
        names(store.list_users("acme", &analysts, None, 10).await.unwrap()),
        ["al", "cat", "dee"]
    );
    let prefix = UserFilter {
        status: None,
        role: Some("Analyst_".into()),
    };
    assert!(
        store
            .list_users("acme", &prefix, None, 10)
            .await
            .unwrap()
            .is_empty(),
        "role names match exactly"
    );
}

async fn roles_and_clients_are_versioned_and_scoped(backend: Backend) {
    let (_db, store) = store(backend).await;
    let role = new_role(
        "acme",
        "Analyst",
        "reads",
        &[permissions::MANAGE_USERS],
        "tester",
    );
    store.insert_role(&role).await.unwrap();
    assert!(matches!(
        store.insert_role(&role).await,
        Err(StoreError::Conflict(_))
    ));
    let mut changed = store.get_role("acme", "Analyst").await.unwrap().unwrap();
    changed.permissions.push(permissions::MANAGE_ROLES.into());
    changed.version += 1;
    store.update_role(&changed).await.unwrap();
    assert!(matches!(
        store.update_role(&changed).await,
        Err(StoreError::Stale)
    ));
    assert_eq!(
        store
            .get_role("acme", "Analyst")
            .await
            .unwrap()
            .unwrap()
            .permissions
            .len(),
        2
    );
    assert!(store.get_role("globex", "Analyst").await.unwrap().is_none());
    assert_eq!(store.list_roles("acme", None, 10).await.unwrap().len(), 1);
    assert!(store.delete_role("acme", "Analyst").await.unwrap());
    assert!(!store.delete_role("acme", "Analyst").await.unwrap());

    let key = SecretKey::generate();
    let spec = ClientSpec {
        name: "app".into(),
        grant_types: vec![grants::CLIENT_CREDENTIALS.into()],
        redirect_uris: vec!["https://app.example.com/cb".into()],
        scopes: vec!["analytics:read".into()],
        issue_refresh_token: false,
        access_token_ttl: 600,
        refresh_token_ttl: Some(86400),
        public: false,
    };
    let (client, secret) = new_client("acme", &spec, &key, "tester");
    store.insert_client(&client).await.unwrap();
    let read = store
        .get_client("acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, client);
    assert!(common::secrets::verify_client_secret(
        &key,
        &secret.unwrap(),
        read.secret_hash.as_ref().unwrap()
    ));
    assert!(store
        .get_client("globex", &client.client_id)
        .await
        .unwrap()
        .is_none());
    store
        .set_client_secret("acme", &client.client_id, "new-hash", Utc::now())
        .await
        .unwrap();
    let rotated = store
        .get_client("acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (rotated.secret_hash.as_deref(), rotated.version),
        (Some("new-hash"), 2)
    );
    assert!(matches!(
        store
            .set_client_secret("globex", &client.client_id, "x", Utc::now())
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(store
        .delete_client("acme", &client.client_id)
        .await
        .unwrap());
}

common::backend_tests!(
    companies_are_created_once,
    users_round_trip_every_field,
    updates_check_the_version,
    login_facts_count_and_lock,
    listings_are_ordered_filtered_and_resume_after_a_key,
    roles_and_clients_are_versioned_and_scoped,
);
