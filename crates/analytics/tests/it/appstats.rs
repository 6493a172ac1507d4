//! `GET /appstats`: the calls of `stats` scored by application `sales` (categories Greeting, Sales and
//! Sales.Upsell), written as the scoring worker writes them, read over HTTP and compared with values
//! computed by hand: every field, category, depth, zeros, agents, cut days, folders, and who may read.

use analytics_store::rollups::{CategoryDayDelta, CategoryDayKey, RollupChanges};
use analytics_store::{self as store, CallScoreRow};
use common::db::Database;
use serde_json::{json, Value};

use crate::support::*;

async fn add_app(world: &World, name: &str) {
    let row = store::AppRow {
        company: COMPANY.into(),
        name: name.into(),
        definition: r#"{"categories":{"Greeting":{"phrases":["thank* for calling"]},"Sales":{"subcategories":{"Upsell":{"phrases":["premium"]}}}}}"#.into(),
        revision: "r1".into(),
        updated: "2026-11-01T00:00:00Z".into(),
    };
    store::put_app(&world.analytics.service.state.db, &row)
        .await
        .unwrap();
}

/// The call's scores in ('' and the three categories): (hit, coverage, score) each, stored, and the
/// rollup changes they make.
async fn scored(world: &World, call: &str, scores: [(i64, f64, i64); 4]) -> RollupChanges {
    let db = &world.analytics.service.state.db;
    let facts = store::call_facts(db, call).await.unwrap().unwrap();
    let rows: Vec<CallScoreRow> = ["", "Greeting", "Sales", "Sales.Upsell"]
        .into_iter()
        .zip(scores)
        .map(|(category, (hit, coverage, score))| CallScoreRow {
            call_id: call.into(),
            app: "sales".into(),
            category: category.into(),
            score,
            hit,
            coverage,
        })
        .collect();
    store::replace_calls_scores(db, &[call], &rows)
        .await
        .unwrap();
    let mut changes = RollupChanges::default();
    for row in &rows {
        changes.category(
            CategoryDayKey {
                company: COMPANY.into(),
                organization: ORG.into(),
                folder: facts.folder.clone(),
                app: "sales".into(),
                day: facts.day.clone(),
                agent_id: facts.agent_id.clone(),
                category: row.category.clone(),
            },
            &CategoryDayDelta::of(&row.score(), &facts.facts(), 1),
        );
    }
    changes
}

/// Writes rollup changes as the category rollup held them before it was packed (migration 5009): a row
/// per category in `analytics_daily_categories`, as a database migrated from that layout holds them.
async fn write_former_rows(db: &Database, changes: &RollupChanges) {
    const INSERT: &str =
        "INSERT INTO analytics_daily_categories (company, organization, folder, app, \
        day, agent_id, category, calls, hits, coverage, score, duration, silence) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";
    macro_rules! insert {
        ($pool:expr) => {
            for (k, d) in &changes.categories {
                sqlx::query(INSERT)
                    .bind(&k.company)
                    .bind(&k.organization)
                    .bind(&k.folder)
                    .bind(&k.app)
                    .bind(&k.day)
                    .bind(&k.agent_id)
                    .bind(&k.category)
                    .bind(d.calls)
                    .bind(d.hits)
                    .bind(d.coverage)
                    .bind(d.score)
                    .bind(d.duration)
                    .bind(d.silence)
                    .execute($pool)
                    .await
                    .unwrap();
            }
        };
    }
    match db {
        Database::Postgres(pool, _) => insert!(pool),
        Database::Sqlite(pool, _, _) => insert!(pool),
    }
}

/// Four calls scored by `sales`; those named in `former` are written as rows of the former layout
/// (`write_former_rows`), the others as the scoring worker writes them.
async fn world_with(stack: Stack, former: &[&str]) -> World {
    let world = World::with_folder(stack).await;
    crate::stats::calls(&world).await;
    add_app(&world, "sales").await;
    let db = world.analytics.service.state.db.clone();
    let calls = [
        // c1 (a1, 20 Nov 10:00, 100 s, silence 10 s): Greeting only.
        ("c1", [(1, 0.5, 2), (1, 1.0, 2), (0, 0.0, 0), (0, 0.0, 0)]),
        // c2 (a1, 20 Nov 15:00, 200 s, 30 s): everything.
        ("c2", [(1, 1.0, 4), (1, 1.0, 1), (1, 1.0, 3), (1, 1.0, 3)]),
        // c3 (a2, outbox, 20 Nov 12:00, 300 s, 50 s): nothing.
        ("c3", [(0, 0.0, 0), (0, 0.0, 0), (0, 0.0, 0), (0, 0.0, 0)]),
        // c4 (a2, 21 Nov 09:00, 61 s, 1 s): Sales.
        ("c4", [(1, 0.5, 1), (0, 0.0, 0), (1, 1.0, 1), (1, 1.0, 1)]),
    ];
    for (call, scores) in calls {
        let changes = scored(&world, call, scores).await;
        if former.contains(&call) {
            write_former_rows(&db, &changes).await;
        } else {
            store::apply_rollups(&db, &changes).await.unwrap();
        }
    }
    world
}

async fn world(stack: Stack) -> World {
    world_with(stack, &[]).await
}

fn stats(ncalls: i64, hitmiss: &str, coverage: &str, duration: &str, silence: &str) -> Value {
    json!({"ncalls": ncalls, "hitmiss": hitmiss, "coverage": coverage, "duration": duration,
           "silence": silence})
}

async fn get(world: &World, query: &str) -> Value {
    let path = format!("/appstats/{COMPANY}/{ORG}/sales?{query}");
    let a = world.send("GET", &path, None).await;
    assert_eq!(a.status, 200, "{path}: {}", a.text);
    a.body
}

fn keys(agent: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = agent
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

async fn every_field_and_category_options(stack: Stack) {
    every_field_and_option_of(&world(stack).await).await;
}

/// A database migrated from the former layout of the category rollup: its rows are moved into the
/// packed ones at start-up, each once (a second pass finds none), and read as if written packed.
async fn former_rollup_rows_are_moved_once(stack: Stack) {
    // c2 and c4 as former rows: 4 categories each; c2 shares a1's day with c1, written packed.
    let world = world_with(stack, &["c2", "c4"]).await;
    let db = &world.analytics.service.state.db;
    assert_eq!(store::move_category_rollups(db).await.unwrap(), 8);
    assert_eq!(store::move_category_rollups(db).await.unwrap(), 0);
    every_field_and_option_of(&world).await;
    let (rollups, calls) = store::rollup_totals(db, COMPANY).await.unwrap();
    assert_eq!(rollups.categories, calls.categories);
    assert_eq!(
        rollups.categories[&("sales".to_string(), String::new())],
        (4, 3, 7)
    );
}

/// A folder deleted while rows of the former layout wait to be moved (written by an instance of an
/// earlier version): its rows go with it, and moving the others later does not bring its sums back.
async fn a_deleted_folders_former_rows_are_not_moved(stack: Stack) {
    // c3, a2's only call on 20 Nov, is in outbox.
    let world = world_with(stack, &["c2", "c3", "c4"]).await;
    let db = &world.analytics.service.state.db;
    let outbox = common::search::Scope {
        company: COMPANY.into(),
        organization: Some(ORG.into()),
        folder: Some("outbox".into()),
    };
    // As the deletion job does: the calls, then the scope's rows.
    store::delete_calls(db, &["c3".to_string()]).await.unwrap();
    store::delete_scope_rows(db, &outbox).await.unwrap();
    assert_eq!(store::move_category_rollups(db).await.unwrap(), 8);
    let days = get(&world, "daterange=20261120-20261120").await;
    assert_eq!(keys(&days[0]), ["a1", "agents", "date"]);
}

/// Transactions changing one agent's day at once, as scoring workers do: each locks and reads the packed
/// row, adds its changes and writes it back, and none of the changes is lost.
async fn concurrent_changes_to_one_day_are_all_counted(stack: Stack) {
    let world = world(stack).await;
    let db = world.analytics.service.state.db.clone();
    let key = |category: &str| CategoryDayKey {
        company: COMPANY.into(),
        organization: ORG.into(),
        folder: FOLDER.into(),
        app: "sales".into(),
        day: "2026-11-20".into(),
        agent_id: "a1".into(),
        category: category.into(),
    };
    let call = CategoryDayDelta {
        calls: 1,
        hits: 1,
        coverage: 0.5,
        score: 2,
        duration: 10.0,
        silence: 1.0,
    };
    // 8 tasks of 5 transactions: each adds a call to Greeting, which all share, and to a category of
    // its own, new to the row.
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let (db, greeting, own) = (db.clone(), key("Greeting"), key(&format!("T{task}")));
            let call = call.clone();
            tokio::spawn(async move {
                for _ in 0..5 {
                    let mut changes = RollupChanges::default();
                    changes.category(greeting.clone(), &call);
                    changes.category(own.clone(), &call);
                    let mut tx = db.begin().await.unwrap();
                    store::apply_rollups(&mut tx, &changes).await.unwrap();
                    tx.commit().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let days = get(&world, "daterange=20261120-20261120").await;
    let a1 = &days[0]["a1"];
    // c1 and c2 hit Greeting (5 minutes, 40 s of silence), then 40 calls of 10 s (1 s).
    assert_eq!(a1["Greeting"]["ncalls"], 42);
    assert_eq!(a1["Greeting"]["duration"], "0:11:40");
    assert_eq!(a1["Greeting"]["silence"], "0:01:20");
    for task in 0..8 {
        assert_eq!(
            a1[format!("T{task}")],
            stats(5, "1.0000", "0.5000", "0:00:50", "0:00:05")
        );
    }
    assert_eq!(a1["calls"], 2, "the application's own sums are untouched");
}

async fn every_field_and_option_of(world: &World) {
    let days = get(world, "daterange=20261120-20261121").await;
    assert_eq!(
        days[0],
        json!({
            "date": "20261120", "agents": 2,
            "a1": {"calls": 2,
                   "overall": stats(2, "1.0000", "0.7500", "0:05:00", "0:00:40"),
                   "Greeting": stats(2, "1.0000", "1.0000", "0:05:00", "0:00:40"),
                   "Sales": stats(1, "0.5000", "0.5000", "0:05:00", "0:00:40"),
                   "Sales.Upsell": stats(1, "0.5000", "0.5000", "0:05:00", "0:00:40")},
            "a2": {"calls": 1, "overall": stats(0, "0.0000", "0.0000", "0:05:00", "0:00:50")}
        })
    );
    assert_eq!(days[1]["date"], "20261121");
    assert_eq!(
        keys(&days[1]["a2"]),
        ["Sales", "Sales.Upsell", "calls", "overall"]
    );
    assert_eq!(days.as_array().unwrap().len(), 2);

    let day = |q: &str| format!("daterange=20261120-20261120&{q}");
    let days = get(world, &day("zeros=true")).await;
    assert_eq!(
        days[0]["a2"]["Greeting"],
        stats(0, "0.0000", "0.0000", "0:05:00", "0:00:50")
    );
    assert_eq!(
        keys(&days[0]["a2"]),
        ["Greeting", "Sales", "Sales.Upsell", "calls", "overall"]
    );
    let days = get(world, &day("category=Sales")).await;
    assert_eq!(keys(&days[0]["a1"]), ["Sales", "calls", "overall"]);
    let days = get(world, &day("category=Sales&depth=1")).await;
    assert_eq!(
        keys(&days[0]["a1"]),
        ["Sales", "Sales.Upsell", "calls", "overall"]
    );
    let days = get(world, &day("category=Sales.Upsell")).await;
    assert_eq!(
        keys(&days[0]["a1"]),
        ["Sales", "Sales.Upsell", "calls", "overall"]
    );
    let days = get(world, &day("depth=0")).await;
    assert_eq!(
        keys(&days[0]["a1"]),
        ["Greeting", "Sales", "calls", "overall"]
    );
    let days = get(world, "daterange=20261120-20261121&agents=a2").await;
    assert_eq!(days[0]["agents"], 1);
    assert_eq!(keys(&days[0]), ["a2", "agents", "date"]);
    assert_eq!(get(world, "daterange=-&agents=nobody").await, json!([]));
    let a = world
        .send(
            "GET",
            &format!("/appstats/{COMPANY}/{ORG}/sales?zeros=maybe"),
            None,
        )
        .await;
    assert_eq!(a.status, 400);
}

async fn ranges_folders_and_access(stack: Stack) {
    let world = world(stack).await;
    // From 12:00 on 20 Nov: c2 for a1 and c3 for a2.
    let days = get(&world, "daterange=20261120120000-20261120").await;
    assert_eq!(
        days[0]["a1"]["overall"],
        stats(1, "1.0000", "1.0000", "0:03:20", "0:00:30")
    );
    assert_eq!(days[0]["a1"]["Greeting"]["ncalls"], 1);
    assert_eq!(days[0]["a2"]["calls"], 1);
    // Defaults and nonsense.
    assert_eq!(get(&world, "").await.as_array().unwrap().len(), 2);
    assert_eq!(get(&world, "daterange=20261121-20261120").await, json!([]));
    assert_eq!(get(&world, "daterange=junk").await, json!([]));
    // One folder: c3 is in outbox.
    let a = world
        .send(
            "GET",
            &format!("/appstats/{COMPANY}/{ORG}/sales/{FOLDER}?daterange=20261120-20261120"),
            None,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(keys(&a.body[0]), ["a1", "agents", "date"]);

    let a = world
        .send("GET", &format!("/appstats/{COMPANY}/{ORG}/billing"), None)
        .await;
    assert_eq!(a.status, 404);
    let a = world
        .send(
            "GET",
            &format!("/appstats/{COMPANY}/{ORG}/sales/nope"),
            None,
        )
        .await;
    assert_eq!((a.status, a.text.as_str()), (404, "Folder not found: nope"));
    let other = world.other_company("globex").await;
    let path = format!("/appstats/{COMPANY}/{ORG}/sales");
    assert_eq!(
        world.send_as(Some(&other), "GET", &path, None).await.status,
        403
    );
    let write_only = world.token_with_scope("analytics:write").await;
    assert_eq!(
        world
            .send_as(Some(&write_only), "GET", &path, None)
            .await
            .status,
        403
    );
}

/// Over the organization, the rows of one agent, day and category in two folders are summed; the
/// answer is written in key order whatever the agents are named.
async fn folders_summed_and_keys_in_order(stack: Stack) {
    let world = world(stack).await;
    // c5 (a1, outbox, 20 Nov 17:00, 40 s, 4 s): Sales only, beside c1 and c2 in the other folder.
    crate::stats::scored_call(
        &world,
        "outbox",
        "c5",
        "2026-11-20T17:00:00",
        "a1",
        (40.0, 4.0, 5, 10.0, 10.0),
        (None, None),
    )
    .await;
    let changes = scored(
        &world,
        "c5",
        [(1, 0.5, 1), (0, 0.0, 0), (1, 1.0, 1), (0, 0.0, 0)],
    )
    .await;
    store::apply_rollups(&world.analytics.service.state.db, &changes)
        .await
        .unwrap();
    let days = get(&world, "daterange=20261120-20261120").await;
    assert_eq!(
        days[0]["a1"],
        json!({"calls": 3,
               "overall": stats(3, "1.0000", "0.6667", "0:05:40", "0:00:44"),
               "Greeting": stats(2, "0.6667", "0.6667", "0:05:40", "0:00:44"),
               "Sales": stats(2, "0.6667", "0.6667", "0:05:40", "0:00:44"),
               "Sales.Upsell": stats(1, "0.3333", "0.3333", "0:05:40", "0:00:44")})
    );
    let a = world
        .send(
            "GET",
            &format!("/appstats/{COMPANY}/{ORG}/sales/{FOLDER}?daterange=20261120-20261120"),
            None,
        )
        .await;
    assert_eq!(a.body[0]["a1"]["calls"], 2);
    // The answer's own bytes: keys in byte order, agents among "agents" and "date".
    let path = format!("/appstats/{COMPANY}/{ORG}/sales?daterange=20261121-20261121");
    let a = world.send("GET", &path, None).await;
    assert!(
        a.text.starts_with(
            r#"[{"a2":{"Sales":{"coverage":"1.0000","duration":"0:01:01","hitmiss":"1.0000","ncalls":1,"silence":"0:00:01"},"#
        ),
        "{}",
        a.text
    );
    assert!(
        a.text.ends_with(r#""agents":1,"date":"20261121"}]"#),
        "{}",
        a.text
    );
}

/// Calls of agents named `date` and `agents`, stored before uploads refused those ids: the day keeps its
/// own `date` and `agents`, and those agents are neither returned nor counted.
async fn agents_named_like_the_days_keys_never_replace_them(stack: Stack) {
    let world = world(stack).await;
    for (call, agent) in [("c6", "date"), ("c7", "agents")] {
        crate::stats::scored_call(
            &world,
            FOLDER,
            call,
            "2026-11-21T11:00:00",
            agent,
            (30.0, 3.0, 5, 10.0, 10.0),
            (None, None),
        )
        .await;
        let changes = scored(
            &world,
            call,
            [(1, 1.0, 2), (1, 1.0, 2), (0, 0.0, 0), (0, 0.0, 0)],
        )
        .await;
        store::apply_rollups(&world.analytics.service.state.db, &changes)
            .await
            .unwrap();
    }
    let path = format!("/appstats/{COMPANY}/{ORG}/sales?daterange=20261121-20261121");
    let a = world.send("GET", &path, None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body[0]["date"], "20261121", "{}", a.text);
    assert_eq!(a.body[0]["agents"], 1, "{}", a.text);
    assert_eq!(keys(&a.body[0]), ["a2", "agents", "date"]);
    assert_eq!(a.text.matches(r#""date":"#).count(), 1, "{}", a.text);
}

/// A category that is not one of the application's is a 400, as `/appmatches` answers it; its
/// categories at any level, and an empty one (none), are taken.
async fn an_unknown_category_is_refused(stack: Stack) {
    let world = world(stack).await;
    for category in ["Nope", "sales", "Upsell", "Sales.Nope", "Greeting.Upsell"] {
        let path = format!(
            "/appstats/{COMPANY}/{ORG}/sales?daterange=20261120-20261120&category={category}"
        );
        let a = world.send("GET", &path, None).await;
        assert_eq!(a.status, 404, "{category}: {}", a.text);
        assert!(a.content_type.starts_with("text/html"));
        assert_eq!(
            a.text,
            format!("Category not found: {category} of application sales")
        );
    }
    for category in ["Sales", "Sales.Upsell", "Greeting", ""] {
        let days = get(
            &world,
            &format!("daterange=20261120-20261120&category={category}"),
        )
        .await;
        assert_eq!(days[0]["agents"], 2, "{category}");
    }
}

crate::stack_tests!(
    an_unknown_category_is_refused,
    agents_named_like_the_days_keys_never_replace_them,
    every_field_and_category_options,
    former_rollup_rows_are_moved_once,
    a_deleted_folders_former_rows_are_not_moved,
    concurrent_changes_to_one_day_are_all_counted,
    ranges_folders_and_access,
    folders_summed_and_keys_in_order
);
