//! The directory store's contract, run against both adapters: what one backend does, the other does too.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{Duration, Utc};
use common::db::{Database, Probe, ProbeArgument, StoreError};
use common::secrets::SecretKey;
use common::testing::{Backend, TestDb};
use directory::{
    grants, new_client, new_company, new_role, permissions, ClientSpec, LoginPolicy, RoleFilter,
    User, UserFilter, STATUS_ACTIVE, STATUS_INACTIVE,
};

/// Runs `$body` with `$pool` bound to the pool of whichever database `$db` is.
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            Database::Postgres($pool, _) => $body,
            Database::Sqlite($pool, ..) => $body,
        }
    };
}

/// A fresh database with the directory's tables and the companies `acme` and `globex`.
async fn directory_db(backend: Backend) -> TestDb {
    let t = TestDb::new(backend).await;
    t.db.migrate(&directory::MIGRATIONS)
        .await
        .expect("migrations apply");
    t.db.migrate(&directory::MIGRATIONS)
        .await
        .expect("migrations are idempotent");
    directory::ensure_company(&t.db, &new_company("acme", "Acme"))
        .await
        .unwrap();
    directory::ensure_company(&t.db, &new_company("globex", "Globex"))
        .await
        .unwrap();
    t
}

/// Roles without permissions.
async fn add_roles(db: &Database, company: &str, names: &[&str]) {
    for name in names {
        directory::insert_role(db, &new_role(company, name, "", &[], "tester"))
            .await
            .unwrap();
    }
}

/// Inserts the user in its own committed transaction.
async fn add_user(db: &Database, user: &User) {
    let mut tx = db.begin().await.unwrap();
    directory::insert_user(&mut tx, user).await.unwrap();
    tx.commit().await.unwrap();
}

async fn read_user(db: &Database, company: &str, username: &str) -> User {
    directory::get_user(db, company, username)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("user {company}/{username} exists"))
}

/// Rows of the join table, to see that nothing of a user's roles is left behind.
async fn user_role_rows(db: &Database, user_id: &str) -> i64 {
    on_pool!(db, |pool| sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM user_roles WHERE user_id = $1"
    )
    .bind(user_id)
    .fetch_one(pool)
    .await
    .unwrap())
}

/// The user's role rows as stored: (role, position), by position.
async fn stored_roles(db: &Database, user_id: &str) -> Vec<(String, i64)> {
    on_pool!(db, |pool| {
        sqlx::query_as::<_, (String, i64)>(
        "SELECT role, CAST(position AS BIGINT) FROM user_roles WHERE user_id = $1 ORDER BY position"
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
    .unwrap()
    })
}

/// What `stored_roles` should be: the primary role at 0, the extra roles from 1 in order.
fn positions(roles: &[&str]) -> Vec<(String, i64)> {
    roles
        .iter()
        .enumerate()
        .map(|(i, r)| (r.to_string(), i as i64))
        .collect()
}

fn names(users: Vec<User>) -> Vec<String> {
    users.into_iter().map(|u| u.username).collect()
}

fn role_names(roles: Vec<directory::Role>) -> Vec<String> {
    roles.into_iter().map(|r| r.name).collect()
}

fn user_role_list(u: &User) -> (String, Vec<String>) {
    (u.primary_role.clone(), u.extra_roles.clone())
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn set(items: &[String]) -> BTreeSet<String> {
    items.iter().cloned().collect()
}

fn policy(now_ms: i64, lock_after: i64, lock_until_ms: i64) -> LoginPolicy {
    LoginPolicy {
        now_ms,
        lock_after,
        lock_until_ms,
    }
}

fn client_spec(admin_access: bool) -> ClientSpec {
    ClientSpec {
        name: "app".into(),
        grant_types: vec![grants::CLIENT_CREDENTIALS.into()],
        redirect_uris: vec!["https://app.example.com/cb".into()],
        scopes: vec!["analytics:read".into()],
        issue_refresh_token: false,
        access_token_ttl: 600,
        refresh_token_ttl: Some(86400),
        public: false,
        admin_access,
    }
}

// ---------------------------------------------------------------------------------------------------
// The contract as it was before the move, ported to the functions of the `directory` crate.
// ---------------------------------------------------------------------------------------------------

async fn companies_are_created_once(backend: Backend) {
    let t = directory_db(backend).await;
    assert!(
        !directory::ensure_company(&t.db, &new_company("acme", "Other name"))
            .await
            .unwrap()
    );
    assert_eq!(
        directory::get_company(&t.db, "acme")
            .await
            .unwrap()
            .unwrap()
            .name,
        "Acme"
    );
    assert!(directory::get_company(&t.db, "initech")
        .await
        .unwrap()
        .is_none());
    assert!(
        directory::ensure_company(&t.db, &new_company("initech", "Initech"))
            .await
            .unwrap(),
        "a new company is created"
    );
}

async fn users_round_trip_every_field(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst", "Auditor"]).await;
    add_roles(db, "globex", &["Analyst"]).await;
    let mut user = User::new("acme", "ada", "Analyst", "tester");
    user.first_name = "Ada".into();
    user.last_name = "Lovelace".into();
    user.salutation = Some("Ms".into());
    user.email = Some("ada@example.com".into());
    user.phone = Some("+1 555 0100".into());
    user.automatic_update = true;
    user.excluded_from_user_activity = true;
    user.company_account_id = Some("acct-7".into());
    user.login_blocked = true;
    user.login_blocked_reason = Some("audit".into());
    user.api_access = true;
    user.extra_roles = vec!["Auditor".into()];
    user.data_access.organization = vec![directory::OrganizationAccess {
        role: "lead".into(),
        data_view: "all".into(),
        unit_group: "north".into(),
        unit_group_display_name: "North".into(),
    }];
    user.data_access.segments = vec![serde_json::json!({"name": "north"})];
    user.links = Some(serde_json::json!({"self": "/admin/v1/users/ada"}));
    user.password_hash = Some("$argon2id$v=19$m=19456,t=2,p=1$abc$def".into());
    user.password_last_set = Some(common::db::now() - Duration::days(3));
    user.password_last_emailed = Some(common::db::now() - Duration::days(2));
    user.password_not_set_reason = Some("invited".into());
    user.last_login = Some(common::db::now() - Duration::hours(5));
    user.login_count = 7;
    user.failed_login_count = 2;
    user.locked_until_ms = Some(1_234);
    user.sessions_valid_after_ms = Some(5_678);
    add_user(db, &user).await;

    let read = read_user(db, "acme", "ada").await;
    assert_eq!(read, user, "every field reads back as written");
    assert_eq!(
        directory::get_user_by_id(db, "acme", &user.id)
            .await
            .unwrap()
            .unwrap(),
        user
    );
    assert!(
        directory::get_user(db, "globex", "ada")
            .await
            .unwrap()
            .is_none(),
        "users belong to one company"
    );
    assert!(directory::get_user_by_id(db, "globex", &user.id)
        .await
        .unwrap()
        .is_none());

    let duplicate = User::new("acme", "ada", "Analyst", "tester");
    let mut tx = db.begin().await.unwrap();
    assert!(matches!(
        directory::insert_user(&mut tx, &duplicate).await,
        Err(StoreError::Conflict(_))
    ));
    drop(tx);
    let same_name_elsewhere = User::new("globex", "ada", "Analyst", "tester");
    let mut tx = db.begin().await.unwrap();
    directory::insert_user(&mut tx, &same_name_elsewhere)
        .await
        .expect("usernames are unique per company only");
    tx.commit().await.unwrap();
    assert_eq!(
        read_user(db, "globex", "ada").await.id,
        same_name_elsewhere.id
    );
    assert_eq!(read_user(db, "acme", "ada").await, user);
}

async fn updates_check_the_version(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    add_user(db, &User::new("acme", "bob", "Analyst", "tester")).await;
    let mut first = read_user(db, "acme", "bob").await;
    let mut second = first.clone();
    first.first_name = "Robert".into();
    first.version += 1;
    let mut tx = db.begin().await.unwrap();
    directory::update_user(&mut tx, &first).await.unwrap();
    tx.commit().await.unwrap();
    second.first_name = "Bobby".into();
    second.version += 1;
    let mut tx = db.begin().await.unwrap();
    assert!(
        matches!(
            directory::update_user(&mut tx, &second).await,
            Err(StoreError::Stale)
        ),
        "a stale write is refused"
    );
    drop(tx);
    let read = read_user(db, "acme", "bob").await;
    assert_eq!((read.first_name.as_str(), read.version), ("Robert", 2));

    assert!(
        !directory::delete_user_if_version(db, "acme", "bob", 1)
            .await
            .unwrap(),
        "a stale delete is refused"
    );
    assert!(directory::delete_user_if_version(db, "acme", "bob", 2)
        .await
        .unwrap());
    assert!(directory::get_user(db, "acme", "bob")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        user_role_rows(db, &read.id).await,
        0,
        "the user's roles go with it"
    );
    assert!(!directory::delete_user_if_version(db, "acme", "bob", 2)
        .await
        .unwrap());
}

async fn login_facts_count_and_lock(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    let user = User::new("acme", "cy", "Analyst", "tester");
    add_user(db, &user).await;
    let facts = |u: User| (u.failed_login_count, u.locked_until_ms);
    for expected in 1..=2 {
        assert_eq!(
            directory::reserve_login_attempt(db, "acme", &user.id, policy(0, 3, 1_000))
                .await
                .unwrap(),
            Some(expected)
        );
    }
    assert_eq!(facts(read_user(db, "acme", "cy").await), (2, None));
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(0, 3, 1_000))
            .await
            .unwrap(),
        Some(3)
    );
    assert_eq!(
        facts(read_user(db, "acme", "cy").await),
        (3, Some(1_000)),
        "the third reservation locks"
    );
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(500, 3, 9_000))
            .await
            .unwrap(),
        None,
        "no attempt while locked"
    );
    assert_eq!(
        facts(read_user(db, "acme", "cy").await),
        (3, Some(1_000)),
        "an attempt while locked neither counts nor extends the lock"
    );
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(10_000, 3, 20_000))
            .await
            .unwrap(),
        Some(1),
        "after the lock the count starts afresh"
    );
    assert_eq!(facts(read_user(db, "acme", "cy").await), (1, None));
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(10_000, 3, 20_000))
            .await
            .unwrap(),
        Some(2)
    );
    let at = common::db::now();
    directory::record_login_success(db, "acme", &user.id, at, 2)
        .await
        .unwrap();
    let read = read_user(db, "acme", "cy").await;
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
    directory::set_password(db, "acme", &user.id, "hash", at)
        .await
        .unwrap();
    assert_eq!(
        read_user(db, "acme", "cy").await.password_hash.as_deref(),
        Some("hash")
    );
}

async fn listings_are_ordered_filtered_and_resume_after_a_key(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Admin", "Analyst", "Analyst_x"]).await;
    add_roles(db, "globex", &["Analyst"]).await;
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
        add_user(db, &user).await;
    }
    add_user(db, &User::new("globex", "bea", "Analyst", "tester")).await;
    let all = UserFilter::default();
    assert_eq!(
        names(
            directory::list_users(db, "acme", &all, None, 10)
                .await
                .unwrap()
        ),
        ["al", "cat", "dee"]
    );
    assert_eq!(
        names(
            directory::list_users(db, "acme", &all, Some("al"), 1)
                .await
                .unwrap()
        ),
        ["cat"]
    );
    let active = UserFilter {
        status: Some("ACTIVE".into()),
        role: None,
    };
    assert_eq!(
        names(
            directory::list_users(db, "acme", &active, None, 10)
                .await
                .unwrap()
        ),
        ["al", "dee"]
    );
    let analysts = UserFilter {
        status: None,
        role: Some("Analyst".into()),
    };
    assert_eq!(
        names(
            directory::list_users(db, "acme", &analysts, None, 10)
                .await
                .unwrap()
        ),
        ["al", "cat", "dee"]
    );
    let prefix = UserFilter {
        status: None,
        role: Some("Analyst_".into()),
    };
    assert!(
        directory::list_users(db, "acme", &prefix, None, 10)
            .await
            .unwrap()
            .is_empty(),
        "role names match exactly"
    );
    let extra = UserFilter {
        status: None,
        role: Some("Analyst_x".into()),
    };
    assert_eq!(
        names(
            directory::list_users(db, "acme", &extra, None, 10)
                .await
                .unwrap()
        ),
        ["al"]
    );
}

async fn roles_and_clients_are_versioned_and_scoped(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    let role = new_role(
        "acme",
        "Analyst",
        "reads",
        &[permissions::MANAGE_USERS],
        "tester",
    );
    directory::insert_role(db, &role).await.unwrap();
    assert!(matches!(
        directory::insert_role(db, &role).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        directory::get_role(db, "acme", "Analyst")
            .await
            .unwrap()
            .unwrap(),
        role,
        "a role reads back as written"
    );
    let mut changed = directory::get_role(db, "acme", "Analyst")
        .await
        .unwrap()
        .unwrap();
    changed.permissions.push(permissions::MANAGE_ROLES.into());
    changed.version += 1;
    directory::update_role(db, &changed).await.unwrap();
    assert!(matches!(
        directory::update_role(db, &changed).await,
        Err(StoreError::Stale)
    ));
    assert_eq!(
        directory::get_role(db, "acme", "Analyst")
            .await
            .unwrap()
            .unwrap()
            .permissions,
        strings(&[permissions::MANAGE_USERS, permissions::MANAGE_ROLES])
    );
    assert!(directory::get_role(db, "globex", "Analyst")
        .await
        .unwrap()
        .is_none());
    assert_eq!(
        directory::list_roles(db, "acme", &RoleFilter::default(), None, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        !directory::delete_role_if_version(db, "acme", "Analyst", 1)
            .await
            .unwrap(),
        "a stale delete is refused"
    );
    assert!(directory::delete_role_if_version(db, "acme", "Analyst", 2)
        .await
        .unwrap());
    assert!(!directory::delete_role_if_version(db, "acme", "Analyst", 2)
        .await
        .unwrap());

    let key = SecretKey::generate();
    let (client, secret) = new_client("acme", &client_spec(false), &key, "tester");
    directory::insert_client(db, &client).await.unwrap();
    assert!(matches!(
        directory::insert_client(db, &client).await,
        Err(StoreError::Conflict(_))
    ));
    let read = directory::get_client(db, "acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, client);
    assert!(common::secrets::verify_client_secret(
        &key,
        &secret.unwrap(),
        read.secret_hash.as_ref().unwrap()
    ));
    assert!(directory::get_client(db, "globex", &client.client_id)
        .await
        .unwrap()
        .is_none());
    directory::set_client_secret(db, "acme", &client.client_id, "new-hash", Utc::now())
        .await
        .unwrap();
    let rotated = directory::get_client(db, "acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (rotated.secret_hash.as_deref(), rotated.version),
        (Some("new-hash"), 2)
    );
    assert!(matches!(
        directory::set_client_secret(db, "globex", &client.client_id, "x", Utc::now()).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(
        !directory::delete_client_if_version(db, "acme", &client.client_id, 1)
            .await
            .unwrap(),
        "a stale delete is refused"
    );
    assert!(
        !directory::delete_client_if_version(db, "globex", &client.client_id, 2)
            .await
            .unwrap(),
        "clients belong to one company"
    );
    assert!(
        directory::delete_client_if_version(db, "acme", &client.client_id, 2)
            .await
            .unwrap()
    );
    assert!(directory::get_client(db, "acme", &client.client_id)
        .await
        .unwrap()
        .is_none());
}

// ---------------------------------------------------------------------------------------------------
// What is new: roles in a join table, transactions, the InUse error, login reservations, admin_access.
// ---------------------------------------------------------------------------------------------------

async fn user_roles_keep_their_order_and_filters_match_exactly(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(
        db,
        "acme",
        &["Admin", "Administrator", "Analyst", "Auditor", "Zeta"],
    )
    .await;
    add_roles(db, "globex", &["Admin"]).await;

    // Not in alphabetical order, so neither a sort nor the table's key order can produce it.
    let mut ann = User::new("acme", "ann", "Zeta", "tester");
    ann.extra_roles = strings(&["Auditor", "Admin", "Analyst"]);
    add_user(db, &ann).await;
    assert_eq!(
        user_role_list(&read_user(db, "acme", "ann").await),
        ("Zeta".into(), strings(&["Auditor", "Admin", "Analyst"]))
    );
    assert_eq!(
        stored_roles(db, &ann.id).await,
        positions(&["Zeta", "Auditor", "Admin", "Analyst"]),
        "stored with the primary role at position 0 and the extra roles in order"
    );

    // Reordered and changed roles are read back in their new order.
    let mut changed = read_user(db, "acme", "ann").await;
    changed.primary_role = "Analyst".into();
    changed.extra_roles = strings(&["Zeta", "Auditor"]);
    changed.version += 1;
    let mut tx = db.begin().await.unwrap();
    directory::update_user(&mut tx, &changed).await.unwrap();
    tx.commit().await.unwrap();
    let read = read_user(db, "acme", "ann").await;
    assert_eq!(
        user_role_list(&read),
        ("Analyst".into(), strings(&["Zeta", "Auditor"]))
    );
    assert_eq!(read.version, 2);
    assert_eq!(
        stored_roles(db, &ann.id).await,
        positions(&["Analyst", "Zeta", "Auditor"]),
        "a dropped role is removed, the others are renumbered"
    );
    let listed = directory::list_users(db, "acme", &UserFilter::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(
        user_role_list(&listed[0]),
        ("Analyst".into(), strings(&["Zeta", "Auditor"])),
        "listings read the roles in order too"
    );

    // ann: Analyst + [Zeta, Auditor]            (ACTIVE)
    // bo:  Administrator                        (ACTIVE)
    // cy:  Analyst + [Admin]                    (ACTIVE)
    // di:  Admin                                (INACTIVE)
    // ed:  Auditor + [Administrator]            (INACTIVE)
    // globex/fa: Admin                          (INACTIVE)
    add_user(db, &User::new("acme", "bo", "Administrator", "tester")).await;
    let mut cy = User::new("acme", "cy", "Analyst", "tester");
    cy.extra_roles = strings(&["Admin"]);
    add_user(db, &cy).await;
    let mut di = User::new("acme", "di", "Admin", "tester");
    di.status = STATUS_INACTIVE.into();
    add_user(db, &di).await;
    let mut ed = User::new("acme", "ed", "Auditor", "tester");
    ed.extra_roles = strings(&["Administrator"]);
    ed.status = STATUS_INACTIVE.into();
    add_user(db, &ed).await;
    let mut fa = User::new("globex", "fa", "Admin", "tester");
    fa.status = STATUS_INACTIVE.into();
    add_user(db, &fa).await;

    let by_role = |role: &str, status: Option<&str>| UserFilter {
        status: status.map(str::to_string),
        role: Some(role.to_string()),
    };
    let list = |filter: UserFilter| async move {
        names(
            directory::list_users(db, "acme", &filter, None, 10)
                .await
                .unwrap(),
        )
    };
    assert_eq!(
        list(by_role("Admin", None)).await,
        ["cy", "di"],
        "holders of Admin as primary (di) and as extra role (cy), not of Administrator"
    );
    assert_eq!(
        list(by_role("Administrator", None)).await,
        ["bo", "ed"],
        "holders of Administrator as primary (bo) and as extra role (ed)"
    );
    assert_eq!(list(by_role("Admin", Some(STATUS_ACTIVE))).await, ["cy"]);
    assert_eq!(list(by_role("Zeta", None)).await, ["ann"]);
    assert!(list(by_role("Admi", None)).await.is_empty());
    assert!(list(by_role("Administrators", None)).await.is_empty());
    assert!(list(by_role("%", None)).await.is_empty());
    assert!(list(by_role("admin", None)).await.is_empty());
    assert_eq!(
        names(
            directory::list_users(db, "acme", &by_role("Analyst", None), Some("ann"), 10)
                .await
                .unwrap()
        ),
        ["cy"],
        "a filtered listing resumes after a key"
    );
    assert_eq!(
        names(
            directory::list_users(db, "globex", &by_role("Admin", None), None, 10)
                .await
                .unwrap()
        ),
        ["fa"]
    );

    let roles = |filter: RoleFilter, company: &'static str| async move {
        role_names(
            directory::list_roles(db, company, &filter, None, 10)
                .await
                .unwrap(),
        )
    };
    let held_by = |status: &str| RoleFilter {
        name: None,
        held_by_status: Some(status.to_string()),
    };
    assert_eq!(
        roles(RoleFilter::default(), "acme").await,
        ["Admin", "Administrator", "Analyst", "Auditor", "Zeta"]
    );
    assert_eq!(
        roles(held_by(STATUS_ACTIVE), "acme").await,
        ["Admin", "Administrator", "Analyst", "Auditor", "Zeta"]
    );
    assert_eq!(
        roles(held_by(STATUS_INACTIVE), "acme").await,
        ["Admin", "Administrator", "Auditor"],
        "roles held (as primary or extra role) by an inactive user of the company"
    );
    assert_eq!(roles(held_by(STATUS_INACTIVE), "globex").await, ["Admin"]);
    assert!(roles(held_by("LOCKED"), "acme").await.is_empty());
    assert_eq!(
        roles(
            RoleFilter {
                name: Some("Admin".into()),
                held_by_status: Some(STATUS_INACTIVE.into()),
            },
            "acme"
        )
        .await,
        ["Admin"]
    );
    assert_eq!(
        roles(
            RoleFilter {
                name: Some("Zeta".into()),
                held_by_status: Some(STATUS_INACTIVE.into()),
            },
            "acme"
        )
        .await,
        Vec::<String>::new()
    );
    assert_eq!(
        role_names(
            directory::list_roles(db, "acme", &held_by(STATUS_INACTIVE), Some("Admin"), 1)
                .await
                .unwrap()
        ),
        ["Administrator"],
        "a filtered role listing resumes after a key and stops at the limit"
    );

    // Activating di, the only inactive holder of Admin, drops Admin from the inactive list.
    let mut di = read_user(db, "acme", "di").await;
    di.status = STATUS_ACTIVE.into();
    di.version += 1;
    let mut tx = db.begin().await.unwrap();
    directory::update_user(&mut tx, &di).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        roles(held_by(STATUS_INACTIVE), "acme").await,
        ["Administrator", "Auditor"]
    );
}

async fn a_user_naming_an_unknown_role_is_not_found_and_not_stored(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    add_roles(db, "globex", &["Auditor"]).await;

    let mut extra_unknown = User::new("acme", "eve", "Analyst", "tester");
    extra_unknown.extra_roles = strings(&["Ghost"]);
    let primary_unknown = User::new("acme", "eve", "Ghost", "tester");
    let mut other_company = User::new("acme", "eve", "Analyst", "tester");
    other_company.extra_roles = strings(&["Auditor"]);
    for user in [&extra_unknown, &primary_unknown, &other_company] {
        let mut tx = db.begin().await.unwrap();
        let result = directory::insert_user(&mut tx, user).await;
        assert!(
            matches!(result, Err(StoreError::NotFound(_))),
            "roles {:?}: {result:?}",
            user_role_list(user)
        );
        drop(tx);
        assert!(
            directory::get_user(db, "acme", "eve")
                .await
                .unwrap()
                .is_none(),
            "no user row is left"
        );
        assert!(directory::get_user_by_id(db, "acme", &user.id)
            .await
            .unwrap()
            .is_none());
        assert_eq!(user_role_rows(db, &user.id).await, 0);
    }

    // The same for an update: the profile is not changed either.
    add_user(db, &User::new("acme", "eve", "Analyst", "tester")).await;
    let mut changed = read_user(db, "acme", "eve").await;
    changed.first_name = "Eve".into();
    changed.extra_roles = strings(&["Ghost"]);
    changed.version += 1;
    let mut tx = db.begin().await.unwrap();
    assert!(matches!(
        directory::update_user(&mut tx, &changed).await,
        Err(StoreError::NotFound(_))
    ));
    drop(tx);
    let read = read_user(db, "acme", "eve").await;
    assert_eq!(
        (
            read.first_name.as_str(),
            read.version,
            user_role_list(&read)
        ),
        ("", 1, ("Analyst".to_string(), Vec::new()))
    );
}

async fn a_held_role_cannot_be_deleted(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst", "Auditor", "Spare"]).await;
    let mut user = User::new("acme", "fay", "Analyst", "tester");
    user.extra_roles = strings(&["Auditor"]);
    add_user(db, &user).await;

    for held in ["Analyst", "Auditor"] {
        let result = directory::delete_role_if_version(db, "acme", held, 1).await;
        assert!(
            matches!(result, Err(StoreError::InUse(_))),
            "deleting {held}: {result:?}"
        );
        assert!(
            directory::get_role(db, "acme", held)
                .await
                .unwrap()
                .is_some(),
            "{held} stays"
        );
    }
    assert_eq!(
        user_role_list(&read_user(db, "acme", "fay").await),
        ("Analyst".into(), strings(&["Auditor"])),
        "the holder keeps its roles"
    );
    assert!(directory::delete_role_if_version(db, "acme", "Spare", 1)
        .await
        .unwrap());

    // Once no user holds it, it can go.
    let mut changed = read_user(db, "acme", "fay").await;
    changed.extra_roles.clear();
    changed.version += 1;
    let mut tx = db.begin().await.unwrap();
    directory::update_user(&mut tx, &changed).await.unwrap();
    tx.commit().await.unwrap();
    assert!(directory::delete_role_if_version(db, "acme", "Auditor", 1)
        .await
        .unwrap());
    assert!(matches!(
        directory::delete_role_if_version(db, "acme", "Analyst", 1).await,
        Err(StoreError::InUse(_))
    ));
    assert!(directory::delete_user_if_version(db, "acme", "fay", 2)
        .await
        .unwrap());
    assert!(directory::delete_role_if_version(db, "acme", "Analyst", 1)
        .await
        .unwrap());
}

async fn transactions_keep_everything_or_nothing(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    let role = new_role("acme", "Temp", "", &[permissions::VIEW_AUDIT_LOG], "tester");
    let user = User::new("acme", "gil", "Temp", "tester");

    let mut tx = db.begin().await.unwrap();
    directory::insert_role(&mut tx, &role).await.unwrap();
    directory::insert_user(&mut tx, &user).await.unwrap();
    assert_eq!(
        directory::get_user(&mut tx, "acme", "gil")
            .await
            .unwrap()
            .map(|u| u.primary_role),
        Some("Temp".into()),
        "the transaction sees its own writes"
    );
    drop(tx);
    assert!(directory::get_role(db, "acme", "Temp")
        .await
        .unwrap()
        .is_none());
    assert!(directory::get_user(db, "acme", "gil")
        .await
        .unwrap()
        .is_none());
    assert_eq!(user_role_rows(db, &user.id).await, 0);

    let mut tx = db.begin().await.unwrap();
    directory::insert_role(&mut tx, &role).await.unwrap();
    directory::insert_user(&mut tx, &user).await.unwrap();
    tx.rollback().await.unwrap();
    assert!(directory::get_role(db, "acme", "Temp")
        .await
        .unwrap()
        .is_none());
    assert!(directory::get_user(db, "acme", "gil")
        .await
        .unwrap()
        .is_none());

    let mut tx = db.begin().await.unwrap();
    directory::insert_role(&mut tx, &role).await.unwrap();
    directory::insert_user(&mut tx, &user).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        directory::get_role(db, "acme", "Temp")
            .await
            .unwrap()
            .unwrap(),
        role
    );
    assert_eq!(read_user(db, "acme", "gil").await, user);
    assert_eq!(
        directory::get_user_with_permissions(db, "acme", &user.id, None)
            .await
            .unwrap()
            .unwrap()
            .permissions,
        strings(&[permissions::VIEW_AUDIT_LOG])
    );
}

async fn a_stale_update_changes_nothing(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Admin", "Analyst", "Auditor"]).await;
    let mut user = User::new("acme", "hal", "Analyst", "tester");
    user.extra_roles = strings(&["Auditor"]);
    add_user(db, &user).await;
    let original = read_user(db, "acme", "hal").await;

    let mut first = original.clone();
    first.primary_role = "Admin".into();
    first.extra_roles = Vec::new();
    first.first_name = "Hal".into();
    first.version += 1;
    let mut tx = db.begin().await.unwrap();
    directory::update_user(&mut tx, &first).await.unwrap();
    tx.commit().await.unwrap();
    let after_first = read_user(db, "acme", "hal").await;
    assert_eq!(after_first, first);

    let mut stale = original.clone();
    stale.primary_role = "Auditor".into();
    stale.extra_roles = strings(&["Analyst", "Admin"]);
    stale.last_name = "Stale".into();
    stale.status = STATUS_INACTIVE.into();
    stale.version += 1;
    let mut tx = db.begin().await.unwrap();
    assert!(matches!(
        directory::update_user(&mut tx, &stale).await,
        Err(StoreError::Stale)
    ));
    // Even a caller that commits after the error has written nothing.
    tx.commit().await.unwrap();
    let read = read_user(db, "acme", "hal").await;
    assert_eq!(read, after_first, "profile, status and roles are unchanged");
    assert_eq!(user_role_rows(db, &user.id).await, 1);

    // A version from the future is stale too.
    let mut ahead = after_first.clone();
    ahead.extra_roles = strings(&["Auditor"]);
    ahead.version += 2;
    let mut tx = db.begin().await.unwrap();
    assert!(matches!(
        directory::update_user(&mut tx, &ahead).await,
        Err(StoreError::Stale)
    ));
    drop(tx);
    assert_eq!(read_user(db, "acme", "hal").await, after_first);

    // A missing user cannot be updated either.
    let mut ghost = User::new("acme", "nobody", "Admin", "tester");
    ghost.version = 2;
    let mut tx = db.begin().await.unwrap();
    assert!(matches!(
        directory::update_user(&mut tx, &ghost).await,
        Err(StoreError::Stale)
    ));
    tx.commit().await.unwrap();
    assert_eq!(user_role_rows(db, &ghost.id).await, 0);
}

async fn permissions_are_the_union_of_the_roles(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    for (company, name, perms) in [
        (
            "acme",
            "Lead",
            &[permissions::MANAGE_USERS, permissions::VIEW_AUDIT_LOG][..],
        ),
        (
            "acme",
            "Keeper",
            &[permissions::VIEW_AUDIT_LOG, permissions::MANAGE_ROLES][..],
        ),
        (
            "acme",
            "Helper",
            &[permissions::MANAGE_ROLES, permissions::MANAGE_USERS][..],
        ),
        ("acme", "Setter", &[permissions::SET_PASSWORDS][..]),
        ("acme", "Empty", &[][..]),
        ("globex", "Lead", &[permissions::MANAGE_CLIENTS][..]),
    ] {
        directory::insert_role(db, &new_role(company, name, "", perms, "tester"))
            .await
            .unwrap();
    }
    let mut user = User::new("acme", "ivy", "Lead", "tester");
    user.extra_roles = strings(&["Keeper", "Helper", "Empty"]);
    add_user(db, &user).await;
    let mut other = User::new("globex", "ivy", "Lead", "tester");
    other.id = format!("{}-globex", user.id);
    add_user(db, &other).await;

    let access = directory::get_user_with_permissions(db, "acme", &user.id, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(access.user, user);
    let granted = access.permissions;
    assert_eq!(
        granted.len(),
        3,
        "each permission once: {granted:?} (the same permission from several roles)"
    );
    assert_eq!(
        set(&granted),
        set(&strings(&[
            permissions::MANAGE_USERS,
            permissions::VIEW_AUDIT_LOG,
            permissions::MANAGE_ROLES
        ])),
        "not Setter's, which the user does not hold, nor globex's Lead"
    );
    let other_access = directory::get_user_with_permissions(db, "globex", &other.id, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        other_access.permissions,
        strings(&[permissions::MANAGE_CLIENTS])
    );
    assert!(
        directory::get_user_with_permissions(db, "acme", "nobody", None)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        directory::get_user_with_permissions(db, "globex", &user.id, None)
            .await
            .unwrap()
            .is_none(),
        "a user is found only in its company"
    );

    // A role's permissions are read when asked, not copied at assignment.
    let mut empty = directory::get_role(db, "acme", "Empty")
        .await
        .unwrap()
        .unwrap();
    empty.permissions = strings(&[permissions::SET_PASSWORDS]);
    empty.version += 1;
    directory::update_role(db, &empty).await.unwrap();
    let granted = directory::get_user_with_permissions(db, "acme", &user.id, None)
        .await
        .unwrap()
        .unwrap()
        .permissions;
    assert_eq!(granted.len(), 4, "{granted:?}");
    assert!(granted.contains(&permissions::SET_PASSWORDS.to_string()));

    let of = |company: &'static str, roles: &'static [&'static str]| async move {
        directory::permissions_of_roles(db, company, roles)
            .await
            .unwrap()
    };
    let union = of("acme", &["Lead", "Keeper", "Helper", "Ghost"]).await;
    assert_eq!(union.len(), 3, "{union:?}");
    assert_eq!(
        set(&union),
        set(&strings(&[
            permissions::MANAGE_USERS,
            permissions::VIEW_AUDIT_LOG,
            permissions::MANAGE_ROLES
        ]))
    );
    assert_eq!(
        of("acme", &["Setter"]).await,
        strings(&[permissions::SET_PASSWORDS])
    );
    assert!(
        of("acme", &["Ghost"]).await.is_empty(),
        "unknown names grant nothing"
    );
    assert!(of("acme", &[]).await.is_empty());
    assert_eq!(
        of("globex", &["Lead"]).await,
        strings(&[permissions::MANAGE_CLIENTS]),
        "roles are per company"
    );
    assert!(of("globex", &["Setter"]).await.is_empty());
}

async fn setting_the_password_voids_earlier_sessions_and_clears_the_lock(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    let mut user = User::new("acme", "jo", "Analyst", "tester");
    user.password_not_set_reason = Some("invited".into());
    add_user(db, &user).await;
    let now_ms = common::db::now_millis();
    for _ in 0..3 {
        directory::reserve_login_attempt(db, "acme", &user.id, policy(now_ms, 3, now_ms + 60_000))
            .await
            .unwrap()
            .expect("not locked yet");
    }
    let locked = read_user(db, "acme", "jo").await;
    assert_eq!(
        (locked.failed_login_count, locked.locked_until_ms),
        (3, Some(now_ms + 60_000))
    );
    assert!(
        locked.session_valid(0),
        "no password change yet: every session is good"
    );

    let at = common::db::now();
    let at_ms = at.timestamp_millis();
    directory::set_password(db, "acme", &user.id, "new-hash", at)
        .await
        .unwrap();
    let read = read_user(db, "acme", "jo").await;
    assert_eq!(read.password_hash.as_deref(), Some("new-hash"));
    assert_eq!(
        read.password_last_set.map(|t| t.timestamp_micros()),
        Some(at.timestamp_micros())
    );
    assert_eq!(read.password_not_set_reason, None);
    assert_eq!(read.sessions_valid_after_ms, Some(at_ms));
    assert_eq!((read.failed_login_count, read.locked_until_ms), (0, None));
    assert!(
        !read.session_valid(at_ms - 1),
        "authenticated before the change"
    );
    assert!(!read.session_valid(at_ms - 3_600_000));
    assert!(read.session_valid(at_ms), "authenticated at the change");
    assert!(read.session_valid(at_ms + 1_000), "authenticated after it");
    let mut blocked = read.clone();
    blocked.login_blocked = true;
    assert!(
        !blocked.session_valid(at_ms + 1_000),
        "a blocked account has no valid session"
    );
    let mut inactive = read.clone();
    inactive.status = STATUS_INACTIVE.into();
    assert!(!inactive.session_valid(at_ms + 1_000));

    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(now_ms, 3, now_ms + 60_000))
            .await
            .unwrap(),
        Some(1),
        "the lock is gone and the count starts afresh"
    );
    assert_eq!(read_user(db, "acme", "jo").await.version, 1);
}

async fn concurrent_login_reservations_never_exceed_the_limit(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    let user = User::new("acme", "kim", "Analyst", "tester");
    add_user(db, &user).await;
    let now_ms = common::db::now_millis();
    let lock_until = now_ms + 15 * 60_000;
    let burst = policy(now_ms, 5, lock_until);

    let start = Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let db = db.clone();
            let id = user.id.clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                directory::reserve_login_attempt(&db, "acme", &id, burst).await
            })
        })
        .collect();
    let mut granted = Vec::new();
    let mut refused = 0;
    for task in tasks {
        match task.await.unwrap().unwrap() {
            Some(n) => granted.push(n),
            None => refused += 1,
        }
    }
    granted.sort();
    assert_eq!(
        granted,
        [1, 2, 3, 4, 5],
        "five attempts, each with its own count"
    );
    assert_eq!(refused, 15);
    let read = read_user(db, "acme", "kim").await;
    assert_eq!(
        (read.failed_login_count, read.locked_until_ms),
        (5, Some(lock_until))
    );

    // A success amid the burst (it had reserved 3) leaves the count and the lock in place.
    let first_at = common::db::now();
    directory::record_login_success(db, "acme", &user.id, first_at, 3)
        .await
        .unwrap();
    let read = read_user(db, "acme", "kim").await;
    assert_eq!(
        (
            read.failed_login_count,
            read.locked_until_ms,
            read.login_count
        ),
        (5, Some(lock_until), 1)
    );
    assert_eq!(
        read.last_login.map(|t| t.timestamp_micros()),
        Some(first_at.timestamp_micros())
    );
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, burst)
            .await
            .unwrap(),
        None,
        "still locked"
    );

    // The last reservation's success clears both.
    let second_at = first_at + Duration::seconds(1);
    directory::record_login_success(db, "acme", &user.id, second_at, 5)
        .await
        .unwrap();
    let read = read_user(db, "acme", "kim").await;
    assert_eq!(
        (
            read.failed_login_count,
            read.locked_until_ms,
            read.login_count
        ),
        (0, None, 2)
    );
    assert_eq!(
        read.last_login.map(|t| t.timestamp_micros()),
        Some(second_at.timestamp_micros())
    );

    // Lock it again, then try after the lock has run out: the count restarts at 1.
    for expected in 1..=5 {
        assert_eq!(
            directory::reserve_login_attempt(db, "acme", &user.id, burst)
                .await
                .unwrap(),
            Some(expected)
        );
    }
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(lock_until - 1, 5, 0))
            .await
            .unwrap(),
        None,
        "the lock holds until it runs out"
    );
    let later = lock_until + 1;
    assert_eq!(
        directory::reserve_login_attempt(db, "acme", &user.id, policy(later, 5, later + 60_000))
            .await
            .unwrap(),
        Some(1)
    );
    let read = read_user(db, "acme", "kim").await;
    assert_eq!((read.failed_login_count, read.locked_until_ms), (1, None));
}

/// Secret rotations that read the same version (the admin API's If-Match) race: one stores its secret
/// and bumps the version, every other one is stale and stores nothing, each in its own transaction as the
/// admin API runs it.
async fn concurrent_secret_rotations_of_one_version_let_one_win(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    let key = SecretKey::generate();
    let (client, _) = new_client("acme", &client_spec(false), &key, "tester");
    directory::insert_client(db, &client).await.unwrap();

    let start = Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let db = db.clone();
            let id = client.client_id.clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                let mut tx = db.begin().await.unwrap();
                let hash = format!("hash {i}");
                let outcome = directory::set_client_secret_if_version(
                    &mut tx,
                    "acme",
                    &id,
                    1,
                    &hash,
                    Utc::now(),
                )
                .await;
                tx.commit().await.unwrap();
                outcome.map(|()| hash)
            })
        })
        .collect();
    let mut won = Vec::new();
    let mut stale = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(hash) => won.push(hash),
            Err(StoreError::Stale) => stale += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((won.len(), stale), (1, 19), "{won:?}");
    let read = directory::get_client(db, "acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (read.secret_hash.as_deref(), read.version),
        (Some(won[0].as_str()), 2),
        "the one secret handed out is the one stored"
    );

    // A version already replaced, another company's client and a missing one are all stale.
    for (company, id, version) in [
        ("acme", client.client_id.as_str(), 1),
        ("globex", client.client_id.as_str(), 2),
        ("acme", "missing", 2),
    ] {
        assert!(matches!(
            directory::set_client_secret_if_version(db, company, id, version, "x", Utc::now())
                .await,
            Err(StoreError::Stale)
        ));
    }
    directory::set_client_secret_if_version(db, "acme", &client.client_id, 2, "y", Utc::now())
        .await
        .unwrap();
    let read = directory::get_client(db, "acme", &client.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((read.secret_hash.as_deref(), read.version), (Some("y"), 3));
}

async fn client_admin_access_round_trips(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    let key = SecretKey::generate();
    let (admin, _) = new_client("acme", &client_spec(true), &key, "tester");
    let (plain, _) = new_client("acme", &client_spec(false), &key, "tester");
    directory::insert_client(db, &admin).await.unwrap();
    directory::insert_client(db, &plain).await.unwrap();
    let get = |id: String| async move {
        directory::get_client(db, "acme", &id)
            .await
            .unwrap()
            .unwrap()
    };
    assert!(get(admin.client_id.clone()).await.admin_access);
    assert!(!get(plain.client_id.clone()).await.admin_access);
    assert_eq!(get(admin.client_id.clone()).await, admin);

    let mut revoked = admin.clone();
    revoked.admin_access = false;
    revoked.name = "app (no admin)".into();
    revoked.version += 1;
    directory::update_client(db, &revoked).await.unwrap();
    assert_eq!(get(admin.client_id.clone()).await, revoked);
    assert!(matches!(
        directory::update_client(db, &revoked).await,
        Err(StoreError::Stale)
    ));

    let mut granted = get(plain.client_id.clone()).await;
    granted.admin_access = true;
    granted.version += 1;
    directory::update_client(db, &granted).await.unwrap();
    let read = get(plain.client_id.clone()).await;
    assert!(read.admin_access);
    assert_eq!(
        read.secret_hash, plain.secret_hash,
        "an update keeps the secret"
    );

    let listed = directory::list_clients(db, "acme", None, 10).await.unwrap();
    let mut expected = vec![
        (revoked.client_id.clone(), false),
        (granted.client_id.clone(), true),
    ];
    expected.sort();
    assert_eq!(
        listed
            .iter()
            .map(|c| (c.client_id.clone(), c.admin_access))
            .collect::<Vec<_>>(),
        expected
    );
    let first = &expected[0].0;
    assert_eq!(
        directory::list_clients(db, "acme", Some(first), 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(directory::list_clients(db, "globex", None, 10)
        .await
        .unwrap()
        .is_empty());
}

/// Users written before the join table (roles in `primary_role` and a JSON array `extra_roles`) keep
/// their roles, in order, when migration 0002 moves them; clients written before it have no admin access.
async fn migration_moves_existing_roles_in_order(backend: Backend) {
    let t = TestDb::new(backend).await;
    let db = &t.db;
    let only_first = |mut m: sqlx::migrate::Migrator| {
        m.migrations = m
            .migrations
            .iter()
            .filter(|m| m.version == 1)
            .cloned()
            .collect::<Vec<_>>()
            .into();
        m
    };
    match db {
        Database::Postgres(pool, _) => only_first((directory::MIGRATIONS.postgres)())
            .run(pool)
            .await
            .unwrap(),
        Database::Sqlite(pool, ..) => only_first((directory::MIGRATIONS.sqlite)())
            .run(pool)
            .await
            .unwrap(),
    }
    // Companies and roles did not change in 0002.
    directory::ensure_company(db, &new_company("acme", "Acme"))
        .await
        .unwrap();
    add_roles(db, "acme", &["Analyst", "Auditor", "Zeta"]).await;
    let at = common::db::now();
    let legacy = [
        ("u1", "old1", "Analyst", r#"["Zeta","Auditor"]"#),
        (
            "u2",
            "old2",
            "Auditor",
            r#"["Auditor","Ghost","Analyst","Analyst"]"#,
        ),
        ("u3", "old3", "Zeta", "[]"),
    ];
    for (id, username, primary, extras) in legacy {
        on_pool!(db, |pool| sqlx::query(
            "INSERT INTO users (id, company, username, primary_role, extra_roles, created_on, \
             modified_on, modified_by) VALUES ($1, 'acme', $2, $3, $4, $5, $5, 'tester')"
        )
        .bind(id)
        .bind(username)
        .bind(primary)
        .bind(extras)
        .bind(at)
        .execute(pool)
        .await
        .map(|_| ())
        .unwrap());
    }
    on_pool!(db, |pool| {
        sqlx::query(
        "INSERT INTO oauth_clients (client_id, company, name, grant_types, redirect_uris, scopes, \
         created_on, modified_on, modified_by) VALUES ('c1', 'acme', 'old', '[]', '[]', '[]', $1, $1, 'x')"
    )
    .bind(at)
    .execute(pool)
    .await
    .map(|_| ())
    .unwrap()
    });

    db.migrate(&directory::MIGRATIONS)
        .await
        .expect("0002 applies");

    assert_eq!(
        user_role_list(&read_user(db, "acme", "old1").await),
        ("Analyst".into(), strings(&["Zeta", "Auditor"]))
    );
    assert_eq!(
        user_role_list(&read_user(db, "acme", "old2").await),
        ("Auditor".into(), strings(&["Analyst"])),
        "the primary role repeated, an unknown role and a duplicate are dropped"
    );
    let old3 = read_user(db, "acme", "old3").await;
    assert_eq!(user_role_list(&old3), ("Zeta".into(), Vec::new()));
    assert_eq!(old3.sessions_valid_after_ms, None);
    assert!(old3.session_valid(0));
    assert!(matches!(
        directory::delete_role_if_version(db, "acme", "Zeta", 1).await,
        Err(StoreError::InUse(_))
    ));
    assert_eq!(
        names(
            directory::list_users(
                db,
                "acme",
                &UserFilter {
                    status: None,
                    role: Some("Auditor".into()),
                },
                None,
                10
            )
            .await
            .unwrap()
        ),
        ["old1", "old2"]
    );
    assert!(
        !directory::get_client(db, "acme", "c1")
            .await
            .unwrap()
            .unwrap()
            .admin_access
    );
}

/// On SQLite the hot reads are answered by direct connections on the calling thread: they return exactly
/// what the pool returns (every field, roles and permissions included), without the pool.
async fn direct_reads_match_the_pool(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst", "Auditor"]).await;
    let mut user = User::new("acme", "dora", "Analyst", "tester");
    user.extra_roles = vec!["Auditor".into()];
    user.email = Some("dora@example.com".into());
    user.last_login = Some(common::db::now());
    user.login_blocked = true;
    user.locked_until_ms = Some(42);
    add_user(db, &user).await;
    let probe = Probe {
        expression: "{0} = 'yes' AND {1} > 2 AND {0} <> 'no'",
        arguments: vec![ProbeArgument::Text("yes"), ProbeArgument::Integer(3)],
    };

    // Inside a transaction every read goes through the pool's connection.
    let mut tx = db.begin().await.unwrap();
    let pooled = directory::get_user(&mut tx, "acme", "dora").await.unwrap();
    let pooled_with = directory::get_user_with_permissions(&mut tx, "acme", &user.id, Some(&probe))
        .await
        .unwrap();
    drop(tx);
    let direct = directory::get_user(db, "acme", "dora").await.unwrap();
    let direct_with = directory::get_user_with_permissions(db, "acme", &user.id, Some(&probe))
        .await
        .unwrap();
    assert_eq!(direct, pooled);
    assert_eq!(direct.as_ref(), Some(&user));
    assert_eq!(direct_with, pooled_with);
    assert!(directory::get_user(db, "acme", "nobody")
        .await
        .unwrap()
        .is_none());

    if let Database::Sqlite(pool, readers, _) = db {
        assert!(readers.is_some(), "a SQLite file gets direct readers");
        // With the pool closed, only the direct readers can answer.
        pool.close().await;
        assert_eq!(
            directory::get_user(db, "acme", "dora").await.unwrap(),
            direct
        );
    }
}

/// A probe of another owner's table is answered in the same read as the account, and changes nothing else.
async fn a_probe_is_answered_with_the_account(backend: Backend) {
    let t = directory_db(backend).await;
    let db = &t.db;
    add_roles(db, "acme", &["Analyst"]).await;
    let user = User::new("acme", "pia", "Analyst", "tester");
    add_user(db, &user).await;
    let probe = |text| Probe {
        expression: "{0} = 'yes' AND {1} > 2",
        arguments: vec![ProbeArgument::Text(text), ProbeArgument::Integer(3)],
    };
    let read = |probe: Option<Probe<'static>>| {
        let id = user.id.clone();
        async move {
            directory::get_user_with_permissions(db, "acme", &id, probe.as_ref())
                .await
                .unwrap()
                .expect("pia is found")
        }
    };
    let yes = read(Some(probe("yes"))).await;
    let no = read(Some(probe("no"))).await;
    let none = read(None).await;
    assert!(yes.probe);
    assert!(!no.probe);
    assert!(!none.probe, "without a probe the answer is false");
    assert_eq!(yes.user, user);
    assert_eq!(no.user, user);
    assert_eq!(none.user, user);
}

common::backend_tests!(
    direct_reads_match_the_pool,
    a_probe_is_answered_with_the_account,
    companies_are_created_once,
    users_round_trip_every_field,
    updates_check_the_version,
    login_facts_count_and_lock,
    listings_are_ordered_filtered_and_resume_after_a_key,
    roles_and_clients_are_versioned_and_scoped,
    user_roles_keep_their_order_and_filters_match_exactly,
    a_user_naming_an_unknown_role_is_not_found_and_not_stored,
    a_held_role_cannot_be_deleted,
    transactions_keep_everything_or_nothing,
    a_stale_update_changes_nothing,
    permissions_are_the_union_of_the_roles,
    setting_the_password_voids_earlier_sessions_and_clears_the_lock,
    concurrent_login_reservations_never_exceed_the_limit,
    concurrent_secret_rotations_of_one_version_let_one_win,
    client_admin_access_round_trips,
    migration_moves_existing_roles_in_order,
);
