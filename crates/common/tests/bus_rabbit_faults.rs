//! The RabbitMQ adapter when the broker is out of reach: nothing committed is lost. The broker itself is
//! never touched; the adapter reaches it through a TCP proxy in the test, which plays the outage by
//! refusing new connections and cutting the live ones.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::bus::{Bus, BusError, Delivery, Message, RabbitBus, RetryPolicy};
use common::db::Database;
use common::testing::{amqp_url, Backend, TestBroker, TestDb};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio::time::Instant;

/// A proxy to the test broker that can be taken down and up again.
struct Proxy {
    /// The broker's URL with the proxy's address in place of the broker's.
    url: String,
    up: Arc<AtomicBool>,
    cut: broadcast::Sender<()>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(up: bool) -> Proxy {
        let (before, target, after) = split_url(&amqp_url());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("{before}{}{after}", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(up));
        let (cut, _) = broadcast::channel(1);
        let accepting = {
            let (up, cut) = (up.clone(), cut.clone());
            tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    if !up.load(Ordering::SeqCst) {
                        // Down: the connection ends before the broker's greeting.
                        continue;
                    }
                    let mut cut = cut.subscribe();
                    let target = target.clone();
                    tokio::spawn(async move {
                        let Ok(mut outbound) = TcpStream::connect(&target).await else {
                            return;
                        };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                            _ = cut.recv() => {}
                        }
                    });
                }
            })
        };
        Proxy {
            url,
            up,
            cut,
            accepting,
        }
    }

    /// Down refuses new connections and cuts the open ones, as an outage of the network would.
    fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
        if !up {
            let _ = self.cut.send(());
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// `amqp://user:pass@` , `host:port`, `/vhost`.
fn split_url(url: &str) -> (String, String, String) {
    let (scheme, rest) = url.split_once("://").expect("an AMQP URL");
    let (auth, rest) = match rest.rsplit_once('@') {
        Some((auth, rest)) => (format!("{auth}@"), rest),
        None => (String::new(), rest),
    };
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    (
        format!("{scheme}://{auth}"),
        host.to_string(),
        path.to_string(),
    )
}

async fn bus_db(backend: Backend) -> TestDb {
    let t = TestDb::new(backend).await;
    t.db.migrate(&common::bus::MIGRATIONS)
        .await
        .expect("migrations apply");
    t
}

/// Rows the relay has not moved to the broker yet.
async fn outbox_len(db: &Database) -> i64 {
    let sql = "SELECT COUNT(*) FROM bus_messages";
    match db {
        Database::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
        Database::Sqlite(pool, _) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
    }
}

async fn publish(bus: &RabbitBus, t: &TestDb, message: &Message) {
    let mut tx = t.db.begin().await.unwrap();
    bus.publish(&mut tx, message).await.unwrap();
    tx.commit().await.unwrap();
}

/// The next message of "jobs", waiting out the adapter's reconnection as a worker would.
async fn next(bus: &RabbitBus) -> Delivery {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match bus.receive("jobs", Duration::from_secs(1)).await {
            Ok(Some(delivery)) => return delivery,
            Ok(None) | Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            other => panic!("nothing delivered in time: {other:?}"),
        }
    }
}

async fn messages_published_while_the_broker_is_out_of_reach_are_delivered_once_it_is(
    backend: Backend,
) {
    let broker = TestBroker::new(&["jobs"]);
    let t = bus_db(backend).await;
    let proxy = Proxy::start(false).await;
    let policy = RetryPolicy::default();
    broker.uses(policy);
    // Started while the broker cannot be reached: publishing does not need it.
    let bus = RabbitBus::start(&proxy.url, t.db.clone(), policy, broker.options());
    let sent: Vec<Message> = (0..5u8).map(|i| Message::new("jobs", vec![i])).collect();
    for message in &sent {
        publish(&bus, &t, message).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(outbox_len(&t.db).await, 5, "kept in the outbox meanwhile");
    assert!(
        bus.receive("jobs", Duration::ZERO).await.is_err(),
        "a consumer is told the broker is out of reach, not that there is nothing"
    );

    proxy.set_up(true);
    for message in &sent {
        let delivery = next(&bus).await;
        assert_eq!(&delivery.message, message, "all of them, in order");
        bus.ack(delivery).await.unwrap();
    }
    assert_eq!(outbox_len(&t.db).await, 0, "relayed rows are deleted");
    bus.close().await;
}

async fn a_connection_cut_with_messages_in_flight_loses_none(backend: Backend) {
    let broker = TestBroker::new(&["jobs"]);
    let t = bus_db(backend).await;
    let proxy = Proxy::start(true).await;
    let policy = RetryPolicy::default();
    broker.uses(policy);
    let bus = RabbitBus::connect(&proxy.url, t.db.clone(), policy, broker.options())
        .await
        .unwrap();
    let mut outstanding = BTreeSet::new();
    for i in 0..10u8 {
        let message = Message::new("jobs", vec![i]);
        outstanding.insert(message.id.clone());
        publish(&bus, &t, &message).await;
    }
    let held = next(&bus).await;
    let held_id = held.message.id.clone();

    proxy.set_up(false);
    // Published during the outage: committed, so never lost.
    for i in 10..20u8 {
        let message = Message::new("jobs", vec![i]);
        outstanding.insert(message.id.clone());
        publish(&bus, &t, &message).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        matches!(bus.ack(held).await, Err(BusError::LeaseLost(_))),
        "the held message went back to its queue with the connection"
    );
    assert!(outbox_len(&t.db).await >= 10, "waiting in the outbox");

    proxy.set_up(true);
    let mut seen = BTreeSet::new();
    while seen != outstanding {
        let delivery = next(&bus).await;
        assert!(
            outstanding.contains(&delivery.message.id),
            "only messages that were sent"
        );
        if delivery.message.id == held_id {
            assert!(delivery.attempt >= 2, "its first delivery counts");
        }
        seen.insert(delivery.message.id.clone());
        bus.ack(delivery).await.unwrap();
    }
    assert_eq!(outbox_len(&t.db).await, 0, "relayed rows are deleted");
    bus.close().await;
}

common::backend_tests!(
    messages_published_while_the_broker_is_out_of_reach_are_delivered_once_it_is,
    a_connection_cut_with_messages_in_flight_loses_none,
);
