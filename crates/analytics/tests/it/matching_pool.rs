//! Matching runs on the matching pool, never on an HTTP worker: while one company's `/appmatches`
//! requests scan a call slowly, another company's requests are answered by the service's one HTTP
//! worker, before those scans end; the check of an application a `PUT /apps` stores is the pool's work
//! too. And a call whose words would take a scan past its budget is not
//! scored by that application, which `/appmatches` says, at once.

use serde_json::{json, Value};

use crate::support::*;

/// 100 words starting and ending with a wildcard (the most an application holds), each a long run of
/// `a` before a letter that never comes: every one backtracks through every long word of a call.
fn slow_application() -> Value {
    let phrases: Vec<String> = (0..100)
        .map(|i| format!("*{}{}*", "a".repeat(200), char::from(b'b' + (i % 24) as u8)))
        .collect();
    json!({"categories": {"Slow": {"phrases": phrases}}})
}

/// A call of 800 long words, each distinct: a scan without a budget takes seconds.
fn long_words_call() -> Value {
    let text: Vec<String> = (0..800)
        .map(|i| format!("{}{i}", "a".repeat(390)))
        .collect();
    json!({"datetime": "2026-11-20T10:15:00", "utterances": [
        {"speaker": "client", "start": 0.0, "end": 60.0, "text": text.join(" ")}
    ]})
}

/// Evil's folder `main/calls` using the slow application, and its call of long words; the call's id.
async fn slow_call(world: &World, evil: &str) -> String {
    let acme = world.token.clone();
    for (path, body) in [
        ("/config/evil".to_string(), json!({})),
        ("/config/evil/main".to_string(), json!({"timezone": "UTC"})),
        ("/apps/evil/slow".to_string(), slow_application()),
        (
            "/config/evil/main/calls".to_string(),
            json!({"apps": ["slow"]}),
        ),
        (format!("/config/{COMPANY}"), json!({})),
    ] {
        let a = world
            .send_as(Some(&evil_or(&acme, evil, &path)), "PUT", &path, Some(body))
            .await;
        assert_eq!(a.status, 200, "{path}: {}", a.text);
    }
    let upload = world
        .upload_into(evil, "evil", "main", "calls", &long_words_call())
        .await;
    assert_eq!(upload.status, 200, "{}", upload.text);
    upload.body["tId"].as_str().unwrap().to_string()
}

async fn another_companys_slow_matches_leave_the_http_worker_free(stack: Stack) {
    // One HTTP worker (the test configuration's), so a match on it would hold every request; scans
    // without a budget, so they are slow.
    let world = World::with(stack, |c| {
        c.match_threads = 1;
        c.scan_budget_steps = u64::MAX / 2;
    })
    .await;
    let acme = world.token.clone();
    let evil = world.other_company("evil").await;
    let call = slow_call(&world, &evil).await;

    let path = format!("/appmatches/evil/main/{call}");
    let scans: Vec<_> = (0..3)
        .map(|_| {
            let url = world.url(&path, Some(&evil));
            tokio::spawn(async move {
                let response = reqwest::get(url).await.unwrap();
                let status = response.status().as_u16();
                (status, std::time::Instant::now())
            })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let a = world
        .send_as(Some(&acme), "GET", &format!("/config/{COMPANY}"), None)
        .await;
    let answered = std::time::Instant::now();
    assert_eq!(a.status, 200, "{}", a.text);
    for scan in scans {
        let (status, ended) = scan.await.unwrap();
        assert_eq!(status, 200);
        assert!(
            ended > answered,
            "acme's request waited for evil's scans to end"
        );
    }
}

async fn an_application_is_checked_on_the_pool_not_the_http_worker(stack: Stack) {
    let world = World::with(stack, |c| c.match_threads = 1).await;
    let acme = world.token.clone();
    let evil = world.other_company("evil").await;
    for (token, company) in [(&evil, "evil"), (&acme, COMPANY)] {
        let path = format!("/config/{company}");
        let a = world
            .send_as(Some(token), "PUT", &path, Some(json!({})))
            .await;
        assert_eq!(a.status, 200, "{}", a.text);
    }

    // The pool's one thread is held: a check on the pool waits for it, one on the HTTP worker would not.
    let state = world.analytics.service.state.clone().into_inner();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let holder = {
        let pool = state.matching.clone();
        tokio::spawn(async move { pool.run("evil", move || held.recv().unwrap()).await })
    };
    let put = {
        let url = world.url("/apps/evil/slow", Some(&evil));
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let response = client
                .put(url)
                .json(&slow_application())
                .send()
                .await
                .unwrap();
            response.status().as_u16()
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !put.is_finished(),
        "the application was checked beside the pool"
    );
    let a = world
        .send_as(Some(&acme), "GET", &format!("/config/{COMPANY}"), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    release.send(()).unwrap();
    holder.await.unwrap().unwrap();
    assert_eq!(put.await.unwrap(), 200);
}

fn evil_or(acme: &str, evil: &str, path: &str) -> String {
    if path.contains("/evil") { evil } else { acme }.to_string()
}

async fn a_call_over_its_scan_budget_is_not_scored_and_says_so(stack: Stack) {
    let world = World::new(stack).await;
    let evil = world.other_company("evil").await;
    let call = slow_call(&world, &evil).await;
    let a = world
        .send_as(
            Some(&evil),
            "GET",
            &format!("/appmatches/evil/main/{call}"),
            None,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let failed = a.body["scorecard"]["slow"]["failed"]
        .as_str()
        .unwrap_or_default();
    assert!(failed.contains("budget"), "{}", a.text);
    // The scoring worker scored the call's figures, without scores of the application.
    let state = world.analytics.service.state.clone().into_inner();
    eventually(|| async {
        let facts = analytics_store::calls_facts(&state.db, &[&call])
            .await
            .unwrap();
        (!facts.is_empty()).then_some(())
    })
    .await;
    let scores = analytics_store::calls_scores(&state.db, &[&call])
        .await
        .unwrap();
    assert!(scores.is_empty(), "{} score rows", scores.len());
}

crate::stack_tests!(
    another_companys_slow_matches_leave_the_http_worker_free,
    a_call_over_its_scan_budget_is_not_scored_and_says_so,
    an_application_is_checked_on_the_pool_not_the_http_worker,
);
