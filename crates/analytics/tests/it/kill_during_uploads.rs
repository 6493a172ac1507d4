//! A fault test: the real `analytics-service` binary is killed with SIGKILL while calls are uploaded. An
//! upload writes its transcript before its row commits, so a cut upload can leave a transcript that no
//! call owns. Restarted with a short sweep, the service removes every such object, and every upload
//! answered 200 before the kill is still a call with its transcript.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::binary::{free_port, DataDir, Process};
use crate::support::{transcript, within, World, COMPANY, FOLDER, ORG};

/// `analytics-service` on `port` beside the world's token service and database; waits until ready.
async fn start(world: &World, port: u16, data: &Path, sweep: &[(&str, &str)]) -> Process {
    let mut command = Command::new(env!("CARGO_BIN_EXE_analytics-service"));
    command
        .env("SPEECH_ANALYTICS_ADDR", format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", &world.auth.db.url)
        .env("SPEECH_SECRET_KEY", world.server_key().to_base64())
        .env("SPEECH_AUTH_URL", &world.auth.url)
        .env("SPEECH_ANALYTICS_DATA_DIR", data)
        .env("SPEECH_LOG_FORMAT", "text")
        .env_remove("SPEECH_CONFIG")
        .env_remove("AMQP_URL")
        .env_remove("S3_ENDPOINT")
        .env_remove("MEILI_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, value) in sweep {
        command.env(name, value);
    }
    let process = Process(command.spawn().expect("analytics-service starts"));
    let ready = within(Duration::from_secs(60), || async {
        let r = reqwest::get(format!("http://127.0.0.1:{port}/readyz"))
            .await
            .ok()?;
        (r.status() == 200).then_some(())
    })
    .await;
    assert!(ready.is_some(), "analytics-service did not become ready");
    process
}

/// The call ids of the transcripts in the folder's directory.
fn transcripts(data: &Path) -> HashSet<String> {
    let folder = data.join("objects").join(COMPANY).join(ORG).join(FOLDER);
    let Ok(entries) = std::fs::read_dir(folder) else {
        return HashSet::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .join("transcript.json")
                .is_file()
                .then(|| e.file_name().into_string().ok())
                .flatten()
        })
        .collect()
}

/// The ids among `ids` that are stored calls.
async fn stored(world: &World, ids: &HashSet<String>) -> HashSet<String> {
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut calls = HashSet::new();
    for chunk in ids.chunks(300) {
        let rows = analytics_store::get_calls(&world.auth.db.db, chunk)
            .await
            .unwrap();
        calls.extend(rows.into_iter().map(|c| c.id));
    }
    calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcripts_of_uploads_cut_by_a_kill_are_swept() {
    let world = World::new(crate::support::Stack::Embedded(
        crate::support::Backend::Postgres,
    ))
    .await;
    world
        .create_folder(ORG, FOLDER, serde_json::json!({}))
        .await;
    let port = free_port();
    let data = DataDir::new("kill-uploads");
    let mut service = start(&world, port, &data.0, &[]).await;

    let url = format!("http://127.0.0.1:{port}/transcribe/{COMPANY}/{ORG}/{FOLDER}");
    let mut uploaders = Vec::new();
    for _ in 0..8 {
        let (url, token) = (url.clone(), world.token.clone());
        uploaders.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut answered = Vec::new();
            for _ in 0..10_000 {
                let form = reqwest::multipart::Form::new()
                    .text("token", token.clone())
                    .part(
                        "file",
                        reqwest::multipart::Part::bytes(
                            transcript("invoice").to_string().into_bytes(),
                        )
                        .file_name("call.json"),
                    );
                let Ok(r) = http.post(&url).multipart(form).send().await else {
                    break;
                };
                if r.status() != 200 {
                    break;
                }
                let Ok(body) = r.json::<serde_json::Value>().await else {
                    break;
                };
                answered.push(body["tId"].as_str().unwrap().to_string());
            }
            answered
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    service.0.kill().expect("SIGKILL");
    let _ = service.0.wait();
    let mut answered = HashSet::new();
    for uploader in uploaders {
        answered.extend(uploader.await.unwrap());
    }
    assert!(
        !answered.is_empty(),
        "uploads were answered before the kill"
    );

    let left = transcripts(&data.0);
    let orphans = left.len() - stored(&world, &left).await.len();
    println!(
        "answered {} uploads; {} transcripts after the kill, {orphans} of them without a call",
        answered.len(),
        left.len()
    );

    // Restarted with a sweep every second and no grace: the transcripts without a call go.
    let _service = start(
        &world,
        port,
        &data.0,
        &[
            ("SPEECH_ANALYTICS_ORPHAN_SWEEP_S", "1"),
            ("SPEECH_ANALYTICS_ORPHAN_GRACE_S", "0"),
        ],
    )
    .await;
    let swept = within(Duration::from_secs(30), || async {
        let left = transcripts(&data.0);
        (stored(&world, &left).await.len() == left.len()).then_some(left)
    })
    .await
    .expect("every transcript without a call is swept");
    let calls = stored(&world, &answered).await;
    assert_eq!(
        calls.len(),
        answered.len(),
        "every answered upload is a call"
    );
    assert!(
        answered.is_subset(&swept),
        "every answered upload keeps its transcript"
    );
}
