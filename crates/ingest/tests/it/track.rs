//! `POST /v3/<app_key>/track` and `/v2/...`: what is stored, what is refused and why, in every body form.

use std::io::Write;

use common::backend_tests;
use serde_json::{json, Value};

use crate::support::{now_ms, Backend, World};

backend_tests!(
    a_batch_is_stored_and_read_back_as_sent,
    invalid_events_are_listed_and_the_valid_ones_stored,
    every_body_form_is_read,
    broken_batches_answer_200_with_status_false_and_store_nothing,
    server_time_projects_replace_the_event_time,
    insert_ids_store_a_retried_batch_once_even_in_a_parallel_burst,
    the_place_comes_from_session_ip_else_the_client_address,
    browser_system_and_place_are_filled_in_from_a_real_user_agent_and_database,
    hostile_bodies_are_refused_without_harm,
    a_project_over_its_rate_limit_is_told_to_retry,
);

fn event(name: &str, user: &str, time: Value) -> Value {
    json!({"event_name": name, "user_id": user, "event_timestamp_epoch": time})
}

async fn a_batch_is_stored_and_read_back_as_sent(backend: Backend) {
    let world = World::new(backend).await;
    let at = now_ms() - 60_000;
    let mut first = event("call_started", "u-1", json!(at));
    first["queue"] = json!("billing");
    first["score"] = json!(4.5);
    first["session_dua"] = json!("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36");
    let answer = world
        .track(
            &world.app_key,
            json!([
                first,
                event("call_ended", "u-1", json!("2026-11-20T10:15:00")),
                event("x", "u-2", json!("20/Nov/2026"))
            ]),
        )
        .await;
    assert_eq!(
        answer,
        json!({"results": {"stored": 3, "duplicates": 0, "rejected": 0, "failed_events": []},
               "status": true, "events_count": 3, "version": "3"})
    );
    let events = world.all_events(&world.app_key).await;
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["x", "call_ended", "call_started"], "oldest first");
    assert_eq!(
        events[0]["event_timestamp_epoch"],
        json!(1_795_132_800_000_i64)
    );
    assert_eq!(events[1]["time"], json!("2026-11-20T10:15:00.000Z"));
    let started = &events[2];
    assert_eq!(started["event_timestamp_epoch"], json!(at));
    assert_eq!(started["user_id"], json!("u-1"));
    assert_eq!(
        started["properties"],
        json!({"queue": "billing", "score": 4.5})
    );
    assert_eq!(started["ip"], json!("127.0.0.1"), "the sender's address");
    assert!(started["session_dua"]
        .as_str()
        .unwrap()
        .contains("Chrome/131"));
    let received = chrono::DateTime::parse_from_rfc3339(started["received_at"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert!((now_ms() - received).abs() < 60_000);
}

async fn invalid_events_are_listed_and_the_valid_ones_stored(backend: Backend) {
    let world = World::new(backend).await;
    let now = now_ms();
    let answer = world
        .track(
            &world.app_key,
            json!([
                event("ok", "u", json!(now)),
                {"user_id": "u", "event_timestamp_epoch": now},
                event("nested", "u", json!(now)).as_object().unwrap().clone().into_iter()
                    .chain([("cart".to_string(), json!({"items": 2}))]).collect::<serde_json::Map<_, _>>(),
                event("future", "u", json!(now + 2 * 3_600_000)),
                event("seconds", "u", json!(now / 1000)),
                "not an object",
                event("also ok", "u", json!("2026-11-01")),
            ]),
        )
        .await;
    assert_eq!(answer["status"], json!(false), "not everything was stored");
    assert_eq!(answer["events_count"], json!(7));
    let results = &answer["results"];
    assert_eq!(
        (results["stored"].clone(), results["rejected"].clone()),
        (json!(2), json!(5))
    );
    let failed: Vec<(u64, Option<&str>)> = results["failed_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["index"].as_u64().unwrap(), f["field"].as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            (1, Some("event_name")),
            (2, Some("cart")),
            (3, Some("event_timestamp_epoch")),
            (4, Some("event_timestamp_epoch")),
            (5, None),
        ]
    );
    let messages: Vec<&str> = results["failed_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages[1].contains("nested JSON is unsupported"),
        "{messages:?}"
    );
    assert!(messages[2].contains("ahead"), "{messages:?}");
    assert!(messages[3].contains("epoch seconds"), "{messages:?}");
    let stored: Vec<String> = world
        .all_events(&world.app_key)
        .await
        .iter()
        .map(|e| e["event_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(stored, ["also ok", "ok"]);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

async fn every_body_form_is_read(backend: Backend) {
    let world = World::new(backend).await;
    let key = &world.app_key;
    let batch = |name: &str| json!({"events": [event(name, "u", json!(now_ms()))]}).to_string();
    let encode =
        |text: &str| -> String { url::form_urlencoded::byte_serialize(text.as_bytes()).collect() };
    let form = ("content-type", "application/x-www-form-urlencoded");
    let json_type = ("content-type", "application/json");
    let sent = [
        (
            format!("/v3/{key}/track"),
            encode(&batch("whole body")).into_bytes(),
            vec![form],
        ),
        (
            format!("/v3/{key}/track"),
            format!("events={}", encode(&batch("field"))).into_bytes(),
            vec![form],
        ),
        (
            format!("/v2/{key}/track"),
            batch("raw v2").into_bytes(),
            vec![json_type],
        ),
        (
            format!("/v3/{key}/track"),
            batch("raw v3").into_bytes(),
            vec![json_type],
        ),
        (
            format!("/v3/{key}/track"),
            gzip(encode(&batch("gzip")).as_bytes()),
            vec![form, ("content-encoding", "gzip")],
        ),
    ];
    for (path, body, headers) in sent {
        let answer = world.track_raw(&path, body, &headers).await;
        assert_eq!(answer["status"], json!(true), "{path}: {answer}");
        assert_eq!(answer["results"]["stored"], json!(1), "{path}: {answer}");
        let version = if path.starts_with("/v2") { "2" } else { "3" };
        assert_eq!(answer["version"], json!(version));
    }
    let mut names: Vec<String> = world
        .all_events(key)
        .await
        .iter()
        .map(|e| e["event_name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["field", "gzip", "raw v2", "raw v3", "whole body"]);
}

async fn broken_batches_answer_200_with_status_false_and_store_nothing(backend: Backend) {
    let world = World::with(backend, |c| c.max_body_bytes = 64 * 1024).await;
    let key = world.app_key.clone();
    let path = format!("/v3/{key}/track");
    let json_type = [("content-type", "application/json")];
    let refused = |answer: &Value, needle: &str| {
        assert_eq!(answer["status"], json!(false), "{answer}");
        assert_eq!(answer["results"]["stored"], json!(0), "{answer}");
        let error = answer["results"]["error"].as_str().unwrap_or_default();
        assert!(error.contains(needle), "{needle:?} in {answer}");
    };
    refused(
        &world
            .track_raw(&path, b"{\"events\": [".to_vec(), &json_type)
            .await,
        "not valid JSON",
    );
    refused(
        &world.track_raw(&path, Vec::new(), &json_type).await,
        "empty",
    );
    let big: Vec<Value> = (0..301)
        .map(|i| event(&format!("e{i}"), "u", json!(now_ms())))
        .collect();
    let answer = world.track(&key, json!(big)).await;
    refused(&answer, "at most 300");
    assert_eq!(
        answer["events_count"],
        json!(301),
        "the events the batch held"
    );
    let padding = "p".repeat(70 * 1024);
    let mut huge = event("huge", "u", json!(now_ms()));
    huge["padding"] = json!(padding);
    refused(&world.track(&key, json!([huge])).await, "larger than");
    let unknown = world
        .track(
            "0123456789abcdef0123456789abcdef",
            json!([event("e", "u", json!(now_ms()))]),
        )
        .await;
    refused(&unknown, "unknown app key");
    assert_eq!(unknown["events_count"], json!(0), "its body is not read");
    let exactly: Vec<Value> = (0..300)
        .map(|i| event(&format!("e{i}"), "u", json!(now_ms())))
        .collect();
    assert_eq!(
        world.track(&key, json!(exactly)).await["results"]["stored"],
        json!(300)
    );
    assert_eq!(
        world.all_events(&key).await.len(),
        300,
        "only the batch of 300"
    );
}

async fn server_time_projects_replace_the_event_time(backend: Backend) {
    let world = World::new(backend).await;
    let key = world.create_project("kiosk", true).await;
    let before = now_ms();
    let answer = world
        .track(
            &key,
            json!([event("a", "u", json!("1999-01-01")), {"event_name": "b", "user_id": "u"}]),
        )
        .await;
    assert_eq!(answer["results"]["stored"], json!(2), "{answer}");
    for stored in world.all_events(&key).await {
        let at = stored["event_timestamp_epoch"].as_i64().unwrap();
        assert!(at >= before && at <= now_ms(), "{stored}");
    }
}

async fn insert_ids_store_a_retried_batch_once_even_in_a_parallel_burst(backend: Backend) {
    let world = World::new(backend).await;
    let now = now_ms();
    let batch: Vec<Value> = (0..20)
        .map(|i| {
            let mut e = event(&format!("e{i}"), "u", json!(now));
            e["insert_id"] = json!(format!("id-{i}"));
            e
        })
        .collect();
    let first = world.track(&world.app_key, json!(batch)).await;
    assert_eq!(first["results"]["stored"], json!(20));
    let again = world.track(&world.app_key, json!(batch)).await;
    assert_eq!(
        (
            again["results"]["stored"].clone(),
            again["results"]["duplicates"].clone()
        ),
        (json!(0), json!(20))
    );
    assert_eq!(again["status"], json!(true), "duplicates are not failures");

    let burst: Vec<Value> = (0..10)
        .map(|i| {
            let mut e = event("burst", "u", json!(now));
            e["insert_id"] = json!(format!("burst-{}", i % 5));
            e
        })
        .collect();
    let answers =
        futures_util::future::join_all((0..8).map(|_| world.track(&world.app_key, json!(burst))))
            .await;
    let stored: u64 = answers
        .iter()
        .map(|a| a["results"]["stored"].as_u64().unwrap())
        .sum();
    let duplicates: u64 = answers
        .iter()
        .map(|a| a["results"]["duplicates"].as_u64().unwrap())
        .sum();
    assert_eq!((stored, duplicates), (5, 75), "{answers:?}");
    let events = world.all_events(&world.app_key).await;
    assert_eq!(events.len(), 25);
    assert_eq!(
        events
            .iter()
            .filter(|e| e["event_name"] == json!("burst"))
            .count(),
        5
    );
    let other = world.create_project("other", false).await;
    let elsewhere = world.track(&other, json!(batch)).await;
    assert_eq!(
        elsewhere["results"]["stored"],
        json!(20),
        "insert ids are per project"
    );
}

async fn the_place_comes_from_session_ip_else_the_client_address(backend: Backend) {
    let world = World::with(backend, |c| c.trusted_proxies = "127.0.0.1".into()).await;
    let now = now_ms();
    let mut given = event("given", "u", json!(now));
    given["session_ip"] = json!("81.2.69.142");
    let mut zero = event("zero", "u", json!(now));
    zero["session_ip"] = json!("0");
    let absent = event("absent", "u", json!(now));
    let json = json!({"events": [given, zero, absent]}).to_string();
    let answer = world
        .track_raw(
            &format!("/v3/{}/track", world.app_key),
            json.into_bytes(),
            &[
                ("content-type", "application/json"),
                ("x-forwarded-for", "203.0.113.9, 127.0.0.1"),
            ],
        )
        .await;
    assert_eq!(answer["results"]["stored"], json!(3), "{answer}");
    let ips: Vec<(String, Value)> = world
        .all_events(&world.app_key)
        .await
        .iter()
        .map(|e| {
            (
                e["event_name"].as_str().unwrap().to_string(),
                e["ip"].clone(),
            )
        })
        .collect();
    let ip_of = |name: &str| ips.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(ip_of("given"), json!("81.2.69.142"));
    assert_eq!(ip_of("zero"), Value::Null, "0 keeps the server address out");
    assert_eq!(
        ip_of("absent"),
        json!("203.0.113.9"),
        "through the trusted proxy"
    );

    // Without trusted proxies a forwarded header is the sender's word only, and is ignored.
    let untrusting = World::new(backend).await;
    let json = json!({"events": [event("absent", "u", json!(now))]}).to_string();
    untrusting
        .track_raw(
            &format!("/v3/{}/track", untrusting.app_key),
            json.into_bytes(),
            &[
                ("content-type", "application/json"),
                ("x-forwarded-for", "203.0.113.9"),
            ],
        )
        .await;
    assert_eq!(
        untrusting.all_events(&untrusting.app_key).await[0]["ip"],
        json!("127.0.0.1")
    );
}

const CHROME_WINDOWS: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const SAFARI_IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1";

async fn browser_system_and_place_are_filled_in_from_a_real_user_agent_and_database(
    backend: Backend,
) {
    // A city database of the GeoIP2 layout, made here: London for 81.2.69.0/24, Berlin for an IPv6 range,
    // and the loopback network the test's requests come from.
    let mut writer = ingest::enrich::mmdb_writer::MmdbWriter::new("GeoIP2-City");
    writer.insert("81.2.69.0/24", Some("London"), Some("England"), Some("GB"));
    writer.insert(
        "2a02:8108::/32",
        Some("Berlin"),
        Some("Land Berlin"),
        Some("DE"),
    );
    writer.insert("127.0.0.0/8", Some("Loopback"), None, Some("ZZ"));
    let path = std::env::temp_dir().join(format!("city-{}.mmdb", uuid_like()));
    writer.write(&path).unwrap();
    let world = World::with(backend, |c| c.geoip_db = Some(path.clone())).await;
    let now = now_ms();
    let mut london = event("london", "u", json!(now));
    london["session_dua"] = json!(CHROME_WINDOWS);
    london["session_ip"] = json!("81.2.69.142");
    let mut berlin = event("berlin", "u", json!(now));
    berlin["session_dua"] = json!(SAFARI_IPHONE);
    berlin["session_ip"] = json!("2a02:8108:1234::1");
    let here = event("here", "u", json!(now));
    let mut nowhere = event("nowhere", "u", json!(now));
    nowhere["session_ip"] = json!("192.0.2.1");
    let answer = world
        .track(&world.app_key, json!([london, berlin, here, nowhere]))
        .await;
    assert_eq!(answer["results"]["stored"], json!(4), "{answer}");
    let events = world.all_events(&world.app_key).await;
    let of = |name: &str| {
        events
            .iter()
            .find(|e| e["event_name"] == json!(name))
            .unwrap()
            .clone()
    };
    let fields = |e: &Value| {
        [
            "browser",
            "browser_version",
            "os",
            "device_type",
            "city",
            "state",
            "country",
        ]
        .map(|f| e[f].as_str().map(str::to_string))
    };
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        fields(&of("london")),
        [
            s("Chrome"),
            s("131.0.0.0"),
            s("Windows 10"),
            s("desktop"),
            s("London"),
            s("England"),
            s("GB")
        ]
    );
    assert_eq!(
        fields(&of("berlin")),
        [
            s("Safari"),
            s("18.1.1"),
            s("iOS"),
            s("mobile"),
            s("Berlin"),
            s("Land Berlin"),
            s("DE")
        ]
    );
    assert_eq!(
        fields(&of("here")),
        [None, None, None, None, s("Loopback"), None, s("ZZ")],
        "no session_ip: the sender's address"
    );
    assert_eq!(
        fields(&of("nowhere")),
        [None, None, None, None, None, None, None]
    );
    let _ = std::fs::remove_file(&path);
}

fn uuid_like() -> String {
    format!("{:x}{:x}", now_ms(), std::process::id())
}

async fn hostile_bodies_are_refused_without_harm(backend: Backend) {
    let world = World::new(backend).await;
    let path = format!("/v3/{}/track", world.app_key);
    let json_type = [("content-type", "application/json")];
    // Nesting deeper than the parser follows.
    let deep = format!(
        "{{\"events\": [{}{}]}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let answer = world.track_raw(&path, deep.into_bytes(), &json_type).await;
    assert_eq!(answer["status"], json!(false));
    assert!(
        answer["results"]["error"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{answer}"
    );
    // A property name or value of the wrong kind, a huge number of properties, control characters.
    let mut wide = event("wide", "u", json!(now_ms()));
    for i in 0..300 {
        wide[format!("p{i}")] = json!(i);
    }
    let mut nul = event("nul\u{0}", "u", json!(now_ms()));
    nul["fine"] = json!("tab\tand\u{0}nul in a property value is kept");
    let answer = world
        .track(
            &world.app_key,
            json!([wide, nul, event("ok", "u", json!(now_ms()))]),
        )
        .await;
    assert_eq!(answer["results"]["stored"], json!(1), "{answer}");
    let fields: Vec<&str> = answer["results"]["failed_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["properties", "event_name"]);
    // An app key shaped to escape the path or the SQL finds no project.
    for key in ["../projects", "x' OR '1'='1", "%00"] {
        let answer = world
            .track_raw(
                &format!(
                    "/v3/{}/track",
                    url::form_urlencoded::byte_serialize(key.as_bytes()).collect::<String>()
                ),
                br#"{"events": []}"#.to_vec(),
                &json_type,
            )
            .await;
        assert!(
            answer["results"]["error"]
                .as_str()
                .unwrap()
                .contains("unknown app key"),
            "{key}: {answer}"
        );
    }
    assert_eq!(world.all_events(&world.app_key).await.len(), 1);
}

async fn a_project_over_its_rate_limit_is_told_to_retry(backend: Backend) {
    let world = World::with(backend, |c| {
        c.rate_limit_events_per_sec = 100;
        c.rate_limit_burst_secs = 3.0;
    })
    .await;
    let batch: Vec<Value> = (0..100)
        .map(|i| event(&format!("e{i}"), "u", json!(now_ms())))
        .collect();
    let answers =
        futures_util::future::join_all((0..5).map(|_| world.track(&world.app_key, json!(batch))))
            .await;
    let stored: Vec<u64> = answers
        .iter()
        .map(|a| a["results"]["stored"].as_u64().unwrap())
        .collect();
    assert_eq!(
        stored.iter().filter(|s| **s == 100).count(),
        3,
        "the burst of 300: {answers:?}"
    );
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a["status"] == json!(false))
        .collect();
    assert_eq!(refused.len(), 2);
    for answer in refused {
        assert_eq!(answer["results"]["retry"], json!(true));
        assert!(answer["results"]["error"]
            .as_str()
            .unwrap()
            .contains("limit of 100 events per second"));
    }
    let other = world.create_project("other", false).await;
    assert_eq!(
        world.track(&other, json!(batch)).await["results"]["stored"],
        json!(100),
        "per project"
    );
    assert_eq!(world.all_events(&world.app_key).await.len(), 300);
}
