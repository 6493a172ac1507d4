//! `copy-events <database-url> <connections> <seconds>`: the baseline of the ingestion benchmark. It writes
//! the rows a `/track` batch of 300 events becomes straight into `ingest_events` with PostgreSQL's binary
//! `COPY`, the same input the service sends, one `COPY` (its own transaction) per 300 rows on each
//! connection, for the given seconds, and prints the rows stored per second. What the service adds on
//! top (HTTP, parsing, checks, enrichment, insert-id claims, group commit) is the difference.

use std::time::{Duration, Instant};

use common::db::Database;
use ingest::model::NewEvent;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, connections, seconds] = args.as_slice() else {
        anyhow::bail!("usage: copy-events <database-url> <connections> <seconds>");
    };
    let connections: usize = connections.parse()?;
    let seconds: u64 = seconds.parse()?;
    // `Database::connect` gives half its connections to the statements run outside a transaction
    // (`StatementPool`, opened only when used) and the rest to sqlx's pool, where each COPY runs: twice
    // the count leaves that pool one connection for each writer.
    let db = Database::connect(url, 2 * connections as u32).await?;
    <ingest::IngestService as common::service::Service>::migrate(&db).await?;
    let Database::Postgres(pool, _) = &db else {
        anyhow::bail!("the COPY baseline needs PostgreSQL");
    };
    // Fewer would leave a writer waiting for another's connection until the pool timed out.
    let transactions = pool.options().get_max_connections() as usize;
    anyhow::ensure!(
        transactions >= connections,
        "the pool holds {transactions} connections for transactions, not the {connections} asked for"
    );
    let now = chrono::Utc::now().timestamp_millis();
    let events: Vec<NewEvent> = (0..300).map(|i| event(i, now)).collect();
    let refs: Vec<&NewEvent> = events.iter().collect();
    ingest::store::Partitions::default()
        .ensure(pool, refs.iter().map(|e| e.time_ms))
        .await?;
    let data = ingest::store::copy_data(&refs);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (pool, data) = (pool.clone(), data.clone());
        tasks.push(tokio::spawn(async move {
            let mut rows = 0u64;
            let mut conn = pool.acquire().await?;
            while Instant::now() < deadline {
                let mut copy = conn.copy_in_raw(ingest::store::COPY).await?;
                copy.send(data.as_slice()).await?;
                rows += copy.finish().await?;
            }
            anyhow::Ok(rows)
        }));
    }
    let mut rows = 0;
    for task in tasks {
        rows += task.await??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("{:.0}", rows as f64 / elapsed);
    Ok(())
}

/// One row as the benchmark's batches become: the same fields, sizes and enrichment.
fn event(i: usize, now: i64) -> NewEvent {
    NewEvent {
        app_key: "0123456789abcdef0123456789abcdef".into(),
        time_ms: now - 60_000 + i as i64,
        event_name: ["page_view", "call_started", "call_ended", "signup"][i % 4].into(),
        user_id: format!("user-{}", i % 97),
        received_ms: now,
        insert_id: None,
        session_dua: Some("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36".into()),
        ip: Some(format!("81.2.69.{}", i % 250)),
        browser: Some("Chrome".into()),
        browser_version: Some("131.0.0.0".into()),
        os: Some("Windows 10".into()),
        device_type: Some("desktop".into()),
        city: None,
        state: None,
        country: None,
        properties: format!(
            r#"{{"plan":"pro","queue":"billing","page":"/pricing/{}","duration":{}}}"#,
            i % 13,
            i * 7
        ),
    }
}
