//! `GET`, `PUT` and `DELETE /apps`: an application is stored as its normalized definition with a
//! revision, read back, replaced and deleted; a definition with a bad phrase is refused with the phrase's
//! path; scopes and the token's company are checked; every real change publishes exactly one rescore job,
//! and sending the same definition again publishes none.

use std::time::Duration;

use messages::v1::RescoreScope;
use serde_json::{json, Value};

use crate::support::*;

fn path(app: &str) -> String {
    format!("/apps/{COMPANY}/{app}")
}

fn billing() -> Value {
    json!({"categories": {
        "Greeting": {"phrases": ["thank* for calling", {"text": "hello", "speaker": "agent"}]},
        "Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium"]}}}
    }})
}

async fn applications_are_stored_read_replaced_and_deleted(stack: Stack) {
    let world = World::with_folder(stack).await;
    let put = world.send("PUT", &path("billing"), Some(billing())).await;
    assert_eq!(put.status, 200, "{}", put.text);
    assert_eq!(put.body["name"], "billing");
    // Stored normalized: keys sorted, the speaker before the text.
    assert_eq!(
        put.body["categories"],
        json!({
            "Greeting": {"phrases": ["thank* for calling", {"speaker": "agent", "text": "hello"}]},
            "Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium"]}}}
        })
    );
    let revision = put.body["revision"].as_str().unwrap().to_string();
    assert_eq!(revision.len(), 16);
    assert!(revision.bytes().all(|b| b.is_ascii_hexdigit()));
    let updated = put.body["updated"].as_str().unwrap().to_string();
    assert!(
        chrono::DateTime::parse_from_rfc3339(&updated).is_ok(),
        "{updated}"
    );

    let get = world.send("GET", &path("billing"), None).await;
    assert_eq!((get.status, &get.body), (200, &put.body));

    // The same definition, keys in another order: nothing changes, not even `updated`.
    let reordered: Value = serde_json::from_str(
        r#"{"categories": {"Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "-no premium"]}}},
            "Greeting": {"phrases": ["thank* for calling", {"speaker": "agent", "text": "hello"}]}}}"#,
    )
    .unwrap();
    let again = world.send("PUT", &path("billing"), Some(reordered)).await;
    assert_eq!((again.status, &again.body), (200, &put.body));

    let mut changed = billing();
    changed["categories"]["Greeting"]["phrases"][0] = json!("thank you for calling");
    let replaced = world
        .send("PUT", &path("billing"), Some(changed.clone()))
        .await;
    assert_eq!(replaced.status, 200, "{}", replaced.text);
    assert_ne!(replaced.body["revision"], revision.as_str());
    assert_eq!(
        replaced.body["categories"]["Greeting"]["phrases"][0],
        "thank you for calling"
    );
    assert_eq!(
        world.send("GET", &path("billing"), None).await.body,
        replaced.body
    );

    // A name with a space, URL-encoded in the path.
    let spaced = world
        .send("PUT", &path("Sales%20Q4"), Some(billing()))
        .await;
    assert_eq!(
        (spaced.status, spaced.body["name"].clone()),
        (200, json!("Sales Q4"))
    );
    assert_eq!(
        spaced.body["revision"], revision,
        "the revision is the definition's"
    );

    let deleted = world.send("DELETE", &path("billing"), None).await;
    assert_eq!((deleted.status, &deleted.body), (200, &replaced.body));
    let gone = world.send("GET", &path("billing"), None).await;
    assert_eq!(
        (gone.status, gone.text.as_str()),
        (404, "Application not found: billing")
    );
    let twice = world.send("DELETE", &path("billing"), None).await;
    assert_eq!(twice.status, 404);
    assert_eq!(
        world.send("GET", &path("Sales%20Q4"), None).await.status,
        200,
        "the other application stays"
    );
}

async fn a_company_unknown_to_analytics_reads_as_not_found(stack: Stack) {
    let world = World::new(stack).await;
    for (method, body) in [("GET", None), ("PUT", Some(billing())), ("DELETE", None)] {
        let a = world.send(method, &path("billing"), body).await;
        assert_eq!(
            (a.status, a.text.as_str()),
            (404, "Folder not found: acme"),
            "{method}"
        );
    }
}

async fn bad_definitions_are_refused_with_their_path(stack: Stack) {
    let world = World::with_folder(stack).await;
    let body = json!({"categories": {"Sales": {"subcategories": {"Upsell": {"phrases": ["premium", "premium &"]}}}}});
    let a = world.send("PUT", &path("billing"), Some(body)).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.content_type, "text/html; charset=utf-8");
    assert_eq!(
        a.text,
        "categories.Sales.Upsell.phrases[1]: invalid phrase &quot;premium &amp;&quot;: nothing after \
         &#39;&amp;&#39; at position 9"
    );

    let mut five = json!({"phrases": ["refund"]});
    for level in ["L5", "L4", "L3", "L2"] {
        five = json!({"subcategories": {level: five}});
    }
    let a = world
        .send(
            "PUT",
            &path("billing"),
            Some(json!({"categories": {"L1": five}})),
        )
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (
            400,
            "categories.L1.L2.L3.L4.subcategories: at most 4 levels of categories"
        )
    );
    let a = world
        .send(
            "PUT",
            &path("billing"),
            Some(json!({"categories": {"A": {"phrases": [{"text": "x", "speaker": "bot"}]}}})),
        )
        .await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (
            400,
            "categories.A.phrases[0].speaker: must be &quot;agent&quot; or &quot;client&quot;"
        )
    );
    let a = world.send("PUT", &path("bill.ing"), Some(billing())).await;
    assert_eq!(a.status, 400);
    assert!(a.text.starts_with("invalid application name"), "{}", a.text);
    let a = world.send("PUT", &path("billing"), None).await;
    assert_eq!(a.status, 400, "an empty body");

    let nothing = world.send("GET", &path("billing"), None).await;
    assert_eq!(nothing.status, 404, "nothing was stored");
}

/// Four-letter words over `a` to `z`, `n` of them from `from` on, each written `*word*`.
fn unanchored(from: usize, n: usize) -> Vec<String> {
    (from..from + n)
        .map(|i| {
            let letter = |k: usize| char::from(b'a' + ((i / 26usize.pow(k as u32)) % 26) as u8);
            format!("*{}{}{}{}*", letter(3), letter(2), letter(1), letter(0))
        })
        .collect()
}

/// An application whose worst call would hold the workers of every company (thousands of words
/// starting and ending with a wildcard, each tried on every word of a call) is refused with the limit
/// it passes, and nothing is stored.
async fn an_application_past_its_limits_is_refused_naming_the_limit(stack: Stack) {
    let world = World::with_folder(stack).await;
    // 35 alternatives a phrase, as `*aaaa*|*aaab*|...`: the third phrase passes 100 such words.
    let phrases: Vec<String> = (0..4).map(|p| unanchored(p * 35, 35).join("|")).collect();
    let body = json!({"categories": {"Evil": {"phrases": phrases}}});
    let a = world.send("PUT", &path("evil"), Some(body)).await;
    assert_eq!(
        (a.status, a.text.as_str()),
        (
            400,
            "categories.Evil.phrases[2]: an application&#39;s phrases hold at most 100 words both \
             starting and ending with a wildcard (such as *fee*)"
        )
    );
    assert_eq!(world.send("GET", &path("evil"), None).await.status, 404);

    // Up to the limit, and words with a literal start beside them, are taken.
    let mut phrases = vec![unanchored(0, 35).join("|"), unanchored(35, 35).join("|")];
    phrases.extend((0..2000).map(|i| format!("fee{i}* & refund")));
    let body = json!({"categories": {"Fees": {"phrases": phrases}}});
    let a = world.send("PUT", &path("fees"), Some(body)).await;
    assert_eq!(a.status, 200, "{}", a.text);
}

async fn scopes_and_the_company_are_checked(stack: Stack) {
    let world = World::with_folder(stack).await;
    assert_eq!(
        world
            .send("PUT", &path("billing"), Some(billing()))
            .await
            .status,
        200
    );
    let read = world.token_with_scope("analytics:read").await;
    let write = world.token_with_scope("analytics:write").await;
    let globex = world.other_company("globex").await;
    let cases: [(&str, Option<&str>, Option<Value>, u16); 9] = [
        ("GET", Some(&read), None, 200),
        ("PUT", Some(&read), Some(billing()), 403),
        ("DELETE", Some(&read), None, 403),
        ("GET", Some(&write), None, 403),
        ("GET", Some(&globex), None, 403),
        ("PUT", Some(&globex), Some(billing()), 403),
        ("DELETE", Some(&globex), None, 403),
        ("GET", None, None, 401),
        ("DELETE", None, None, 401),
    ];
    for (method, token, body, status) in cases {
        let a = world.send_as(token, method, &path("billing"), body).await;
        assert_eq!(a.status, status, "{method} {token:?}: {}", a.text);
    }
    // globex reaches its own company (unknown to analytics), never acme's application.
    let own = world
        .send_as(Some(&globex), "GET", "/apps/globex/billing", None)
        .await;
    assert_eq!(
        (own.status, own.text.as_str()),
        (404, "Folder not found: globex")
    );
    assert_eq!(
        world.send("GET", &path("billing"), None).await.status,
        200,
        "still there"
    );
}

/// The rescore jobs published since the last call: `expected` of them, then none within a second.
async fn rescore_jobs(stand_in: &StandIn, expected: usize) -> Vec<RescoreScope> {
    let bus = stand_in.bus();
    let mut jobs = Vec::new();
    for _ in 0..expected {
        let delivery = bus
            .receive(messages::topics::RESCORE, Duration::from_secs(10))
            .await
            .unwrap()
            .expect("a rescore job");
        jobs.push(
            <RescoreScope as messages::Message>::decode(delivery.message.body.as_slice()).unwrap(),
        );
        bus.ack(delivery).await.unwrap();
    }
    let extra = bus
        .receive(messages::topics::RESCORE, Duration::from_secs(1))
        .await
        .unwrap();
    assert!(
        extra.is_none(),
        "one more job than expected: {:?}",
        extra.map(|d| <RescoreScope as messages::Message>::decode(d.message.body.as_slice()))
    );
    jobs
}

async fn every_real_change_publishes_one_rescore_job(stack: Stack) {
    let mut world = World::with_folder(stack).await;
    // This replica's workers stop, so the test reads the jobs itself.
    world
        .analytics
        .workers
        .take()
        .expect("workers")
        .stop()
        .await;
    let stand_in = world.stand_in().await;

    let a = world.send("PUT", &path("billing"), Some(billing())).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let jobs = rescore_jobs(&stand_in, 1).await;
    assert_eq!(
        (
            jobs[0].company.as_str(),
            jobs[0].organization.as_str(),
            jobs[0].folder.as_str(),
            jobs[0].app.as_str()
        ),
        (COMPANY, "", "", "billing")
    );

    // The same definition: nothing.
    world.send("PUT", &path("billing"), Some(billing())).await;
    rescore_jobs(&stand_in, 0).await;
    // A refused definition: nothing.
    let refused = world
        .send(
            "PUT",
            &path("billing"),
            Some(json!({"categories": {"A": {"phrases": ["a &"]}}})),
        )
        .await;
    assert_eq!(refused.status, 400);
    rescore_jobs(&stand_in, 0).await;

    let mut changed = billing();
    changed["categories"]["Sales"]["subcategories"]["Upsell"]["phrases"][1] = json!("-cheap");
    world.send("PUT", &path("billing"), Some(changed)).await;
    let jobs = rescore_jobs(&stand_in, 1).await;
    assert_eq!(jobs[0].app, "billing");

    assert_eq!(
        world.send("DELETE", &path("billing"), None).await.status,
        200
    );
    let jobs = rescore_jobs(&stand_in, 1).await;
    assert_eq!(
        (jobs[0].company.as_str(), jobs[0].app.as_str()),
        (COMPANY, "billing")
    );
    assert_ne!(
        jobs[0].job_id, "",
        "every job has its id, for the worker's logs"
    );
    // Deleting what is not there: nothing.
    assert_eq!(
        world.send("DELETE", &path("billing"), None).await.status,
        404
    );
    rescore_jobs(&stand_in, 0).await;
}

crate::stack_tests!(
    applications_are_stored_read_replaced_and_deleted,
    a_company_unknown_to_analytics_reads_as_not_found,
    bad_definitions_are_refused_with_their_path,
    an_application_past_its_limits_is_refused_naming_the_limit,
    scopes_and_the_company_are_checked,
    every_real_change_publishes_one_rescore_job,
);
