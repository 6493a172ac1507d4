//! The bus contract, which every adapter passes: messages exist once their transaction commits, are
//! delivered at least once, in order per topic, to one consumer at a time, come back when a consumer dies
//! holding them, are retried with growing waits, and end as dead letters instead of being lost or retried
//! forever. Every behaviour runs against each adapter — the embedded queue and RabbitMQ — on both
//! databases (`embedded::on_postgres::…`, `rabbit::on_sqlite::…` and so on).
//!
//! Delivery may lag the commit (the RabbitMQ adapter relays the outbox to the broker), so a consumer
//! that expects a message waits `SOON` for it; `NOW` only asks whether anything is there.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::bus::{Bus, BusError, DatabaseQueue, Message, RabbitBus, Retried, RetryPolicy};
use common::testing::{Backend, TestBroker, TestDb};

const NOW: Duration = Duration::ZERO;
const SOON: Duration = Duration::from_secs(5);
/// How long the embedded queue leases a message where the test does not let a consumer die.
const LONG_LEASE: Duration = Duration::from_secs(60);
/// Every topic the suite uses, so the RabbitMQ adapter's queues are all deleted after each test.
const TOPICS: &[&str] = &["jobs", "a", "b", "other"];

/// What the contract needs of an adapter beyond the `Bus` trait: starting one on a test's database, and
/// the death of a consumer, which each adapter notices its own way.
trait Adapter: Sized {
    type Bus: Bus + 'static;

    /// The adapter's resources for one test.
    fn new() -> Self;

    /// An adapter on `t`'s database. `lease` is how long the embedded queue lets a consumer hold a
    /// message; the broker's lease lasts as long as the consumer's channel instead.
    async fn start(&self, t: &TestDb, policy: RetryPolicy, lease: Duration) -> Self::Bus;

    /// An adapter whose broker holds at most `window` ready messages of a topic, the rest waiting in
    /// the outbox (the RabbitMQ relay's window; the embedded queue has no broker).
    async fn start_windowed(&self, t: &TestDb, window: u32) -> Self::Bus;

    /// The process that holds `bus`'s deliveries dies; returns once the broker or the database can tell,
    /// so the messages it held are up for delivery again.
    async fn consumer_dies(&self, bus: &Self::Bus, lease: Duration);
}

/// The embedded queue: a consumer's death shows as its lease running out.
struct Embedded;

impl Adapter for Embedded {
    type Bus = DatabaseQueue;

    fn new() -> Self {
        Embedded
    }

    async fn start(&self, t: &TestDb, policy: RetryPolicy, lease: Duration) -> DatabaseQueue {
        DatabaseQueue::new(t.db.clone(), policy, lease)
            .with_poll_interval(Duration::from_millis(20))
    }

    async fn start_windowed(&self, t: &TestDb, _window: u32) -> DatabaseQueue {
        self.start(t, patient(), LONG_LEASE).await
    }

    async fn consumer_dies(&self, _bus: &DatabaseQueue, lease: Duration) {
        // Past the lease, with a margin for the clocks of the test and the database.
        tokio::time::sleep(lease + Duration::from_millis(100)).await;
    }
}

/// RabbitMQ, in a namespace of the test's own: a consumer's death is its connection closing.
struct Rabbit(TestBroker);

impl Adapter for Rabbit {
    type Bus = RabbitBus;

    fn new() -> Self {
        Rabbit(TestBroker::new(TOPICS))
    }

    async fn start(&self, t: &TestDb, policy: RetryPolicy, _lease: Duration) -> RabbitBus {
        self.0.connect(&t.db, policy).await
    }

    async fn start_windowed(&self, t: &TestDb, window: u32) -> RabbitBus {
        let options = common::bus::RabbitOptions {
            window,
            ..self.0.options()
        };
        self.0.connect_with(&t.db, patient(), options).await
    }

    async fn consumer_dies(&self, bus: &RabbitBus, _lease: Duration) {
        bus.close().await;
    }
}

async fn bus_db(backend: Backend) -> TestDb {
    let t = TestDb::new(backend).await;
    t.db.migrate(&common::bus::MIGRATIONS)
        .await
        .expect("migrations apply");
    t.db.migrate(&common::bus::MIGRATIONS)
        .await
        .expect("migrations are idempotent");
    t
}

fn patient() -> RetryPolicy {
    RetryPolicy::default()
}

async fn publish(bus: &impl Bus, t: &TestDb, message: &Message) {
    let mut tx = t.db.begin().await.unwrap();
    bus.publish(&mut tx, message).await.unwrap();
    tx.commit().await.unwrap();
}

async fn a_message_exists_once_its_transaction_commits<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = Arc::new(adapter.start(&t, patient(), LONG_LEASE).await);
    let message = Message::new("jobs", b"first".to_vec()).with_traceparent(Some(
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
    ));

    let mut tx = t.db.begin().await.unwrap();
    bus.publish(&mut tx, &message).await.unwrap();
    // A consumer asking meanwhile gets nothing before the commit (on SQLite it waits for the writer).
    let consumer = {
        let bus = bus.clone();
        tokio::spawn(async move { bus.receive("jobs", Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!consumer.is_finished(), "not before the commit");
    tx.commit().await.unwrap();
    let delivery = consumer.await.unwrap().unwrap().expect("delivered");
    assert_eq!(delivery.message, message, "body and trace context intact");
    assert_eq!(delivery.attempt, 1);
    bus.ack(delivery).await.unwrap();
    assert!(
        bus.receive("jobs", NOW).await.unwrap().is_none(),
        "acked: gone"
    );

    let dropped = Message::new("jobs", b"never".to_vec());
    let mut tx = t.db.begin().await.unwrap();
    bus.publish(&mut tx, &dropped).await.unwrap();
    tx.rollback().await.unwrap();
    assert!(
        bus.receive("jobs", Duration::from_millis(300))
            .await
            .unwrap()
            .is_none(),
        "a rolled-back change announces nothing"
    );
}

async fn a_waiting_consumer_gets_a_message_published_meanwhile<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = Arc::new(adapter.start(&t, patient(), LONG_LEASE).await);
    let waiting = {
        let bus = bus.clone();
        tokio::spawn(async move { bus.receive("jobs", SOON).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let message = Message::new("jobs", b"late".to_vec());
    publish(&*bus, &t, &message).await;
    let delivery = waiting.await.unwrap().unwrap().expect("the waiter gets it");
    assert_eq!(delivery.message, message);
}

async fn topics_are_separate_and_each_is_first_in_first_out<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start(&t, patient(), LONG_LEASE).await;
    for i in 0..5 {
        publish(&bus, &t, &Message::new("a", vec![i])).await;
        publish(&bus, &t, &Message::new("b", vec![100 + i])).await;
    }
    for (topic, first) in [("a", 0u8), ("b", 100u8)] {
        for i in 0..5 {
            let d = bus.receive(topic, SOON).await.unwrap().expect("queued");
            assert_eq!(d.message.topic, topic);
            assert_eq!(d.message.body, vec![first + i]);
            bus.ack(d).await.unwrap();
        }
        assert!(bus.receive(topic, NOW).await.unwrap().is_none());
    }
}

async fn a_message_whose_consumer_dies_is_delivered_again<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let lease = Duration::from_millis(300);
    let bus = adapter.start(&t, patient(), lease).await;
    let message = Message::new("jobs", b"work".to_vec());
    publish(&bus, &t, &message).await;

    let first = bus.receive("jobs", SOON).await.unwrap().expect("delivered");
    assert!(
        bus.receive("jobs", NOW).await.unwrap().is_none(),
        "held: no one else gets it"
    );
    // The consumer dies holding it; after a restart (a new adapter on the same database and broker) the
    // message comes back.
    adapter.consumer_dies(&bus, lease).await;
    let restarted = adapter.start(&t, patient(), lease).await;
    let second = restarted
        .receive("jobs", SOON)
        .await
        .unwrap()
        .expect("delivered again");
    assert_eq!(second.message, message);
    assert_eq!(second.attempt, 2);
    assert!(
        matches!(bus.ack(first).await, Err(BusError::LeaseLost(_))),
        "the first consumer's late acknowledgement is void"
    );
    restarted.ack(second).await.unwrap();
    assert!(restarted.receive("jobs", NOW).await.unwrap().is_none());
}

async fn failures_wait_longer_each_time_then_the_message_is_a_dead_letter<A: Adapter>(
    backend: Backend,
) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let policy = RetryPolicy {
        max_attempts: 3,
        first_wait: Duration::from_millis(150),
        max_wait: Duration::from_secs(10),
    };
    let bus = adapter.start(&t, policy, LONG_LEASE).await;
    let message = Message::new("jobs", b"flaky".to_vec()).with_traceparent(Some(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
    ));
    publish(&bus, &t, &message).await;

    for (attempt, wait) in [(1, 150), (2, 300)] {
        let d = bus.receive("jobs", SOON).await.unwrap().expect("delivered");
        assert_eq!(d.attempt, attempt);
        assert_eq!(d.message, message, "a retried message comes back whole");
        let retried = bus.retry(d, "the callback answered 503").await.unwrap();
        assert_eq!(retried, Retried::After(Duration::from_millis(wait)));
        assert!(
            bus.receive("jobs", NOW).await.unwrap().is_none(),
            "not before its wait"
        );
    }
    let last = bus.receive("jobs", SOON).await.unwrap().expect("third try");
    assert_eq!(last.attempt, 3);
    assert_eq!(
        bus.retry(last, "the callback answered 503").await.unwrap(),
        Retried::DeadLettered
    );
    assert!(bus
        .receive("jobs", Duration::from_millis(500))
        .await
        .unwrap()
        .is_none());
    let dead = bus.dead_letters("jobs", 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].message, message);
    assert_eq!(dead[0].attempts, 3);
    assert!(dead[0].reason.contains("503"), "{}", dead[0].reason);
}

async fn a_consumer_may_set_its_own_wait_and_attempt_count<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    // The bus's own policy would bury the message after two attempts; the consumer keeps its own count.
    // (Its one wait is the one the consumer asks for, so the test broker removes that wait queue.)
    let policy = RetryPolicy {
        max_attempts: 2,
        first_wait: Duration::from_millis(200),
        max_wait: Duration::from_millis(200),
    };
    let bus = adapter.start(&t, policy, LONG_LEASE).await;
    let message = Message::new("callbacks", b"deliver".to_vec());
    publish(&bus, &t, &message).await;
    for attempt in 1..=3 {
        let d = bus
            .receive("callbacks", SOON)
            .await
            .unwrap()
            .expect("delivered");
        assert_eq!(d.attempt, attempt);
        assert_eq!(d.message, message);
        bus.retry_after(d, Duration::from_millis(200))
            .await
            .unwrap();
        assert!(
            bus.receive("callbacks", NOW).await.unwrap().is_none(),
            "not before its wait"
        );
    }
    let d = bus.receive("callbacks", SOON).await.unwrap().expect("back");
    assert_eq!(d.attempt, 4);
    bus.ack(d).await.unwrap();
    assert!(bus.dead_letters("callbacks", 10).await.unwrap().is_empty());
}

async fn a_consumer_at_work_keeps_its_lease<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let lease = Duration::from_millis(600);
    let bus = adapter.start(&t, patient(), lease).await;
    let message = Message::new("jobs", b"long".to_vec());
    publish(&bus, &t, &message).await;
    let d = bus.receive("jobs", SOON).await.unwrap().expect("delivered");
    // Three leases long, renewed every half lease: nobody else gets the message meanwhile.
    for _ in 0..6 {
        tokio::time::sleep(lease / 2).await;
        bus.keep_leased(&d).await.unwrap();
        assert!(
            bus.receive("jobs", NOW).await.unwrap().is_none(),
            "still leased"
        );
    }
    bus.ack(d).await.unwrap();
    tokio::time::sleep(lease).await;
    assert!(
        bus.receive("jobs", NOW).await.unwrap().is_none(),
        "done with"
    );
}

async fn a_poison_message_is_a_dead_letter_at_once<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start(&t, patient(), LONG_LEASE).await;
    let poison = Message::new("jobs", b"\xff not a protobuf".to_vec());
    let fine = Message::new("jobs", b"fine".to_vec());
    publish(&bus, &t, &poison).await;
    publish(&bus, &t, &fine).await;
    let d = bus.receive("jobs", SOON).await.unwrap().unwrap();
    bus.dead_letter(d, "the body does not decode")
        .await
        .unwrap();
    let next = bus.receive("jobs", SOON).await.unwrap().unwrap();
    assert_eq!(next.message, fine, "the queue goes on behind it");
    bus.ack(next).await.unwrap();
    let dead = bus.dead_letters("jobs", 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (&dead[0].message, dead[0].attempts),
        (&poison, 1),
        "kept whole"
    );
    assert_eq!(dead[0].reason, "the body does not decode");
    assert_eq!(
        bus.dead_letters("jobs", 10).await.unwrap(),
        dead,
        "reading dead letters leaves them in place"
    );
    assert!(bus.dead_letters("other", 10).await.unwrap().is_empty());
}

async fn dead_letters_are_counted_and_replayed_oldest_first<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start(&t, patient(), LONG_LEASE).await;
    assert_eq!(bus.dead_letter_count("jobs").await.unwrap(), 0);
    assert_eq!(
        bus.replay_dead("jobs", 10).await.unwrap(),
        0,
        "nothing to replay"
    );
    let sent: Vec<Message> = (0..3)
        .map(|i| Message::new("jobs", format!("job {i}").into_bytes()))
        .collect();
    for message in &sent {
        publish(&bus, &t, message).await;
    }
    for _ in &sent {
        let d = bus.receive("jobs", SOON).await.unwrap().unwrap();
        bus.dead_letter(d, "refused by the index").await.unwrap();
    }
    assert_eq!(bus.dead_letter_count("jobs").await.unwrap(), 3);
    assert_eq!(bus.dead_letter_count("other").await.unwrap(), 0);

    assert_eq!(
        bus.replay_dead("jobs", 2).await.unwrap(),
        2,
        "at most the limit"
    );
    assert_eq!(bus.dead_letter_count("jobs").await.unwrap(), 1);
    for expected in &sent[..2] {
        let d = bus.receive("jobs", SOON).await.unwrap().unwrap();
        assert_eq!(&d.message, expected, "oldest first, kept whole");
        assert_eq!(d.attempt, 1, "attempts counted from the start");
        bus.ack(d).await.unwrap();
    }
    assert_eq!(bus.replay_dead("jobs", 10).await.unwrap(), 1);
    let d = bus.receive("jobs", SOON).await.unwrap().unwrap();
    assert_eq!(d.message, sent[2]);
    bus.ack(d).await.unwrap();
    assert_eq!(bus.dead_letter_count("jobs").await.unwrap(), 0);
    assert!(bus.dead_letters("jobs", 10).await.unwrap().is_empty());
    assert!(bus.receive("jobs", NOW).await.unwrap().is_none());
}

async fn concurrent_consumers_never_share_a_message<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = Arc::new(adapter.start(&t, patient(), LONG_LEASE).await);
    let mut sent = BTreeSet::new();
    let mut tx = t.db.begin().await.unwrap();
    for i in 0..60u32 {
        let m = Message::new("jobs", i.to_be_bytes().to_vec());
        sent.insert(m.id.clone());
        bus.publish(&mut tx, &m).await.unwrap();
    }
    tx.commit().await.unwrap();

    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let bus = bus.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                // Until the queue stays empty for a while: the messages may still be on their way.
                while let Some(d) = bus.receive("jobs", Duration::from_secs(1)).await.unwrap() {
                    got.push(d.message.id.clone());
                    bus.ack(d).await.unwrap();
                }
                got
            })
        })
        .collect();
    let mut received = Vec::new();
    for c in consumers {
        received.extend(c.await.unwrap());
    }
    let unique: BTreeSet<String> = received.iter().cloned().collect();
    assert_eq!(
        received.len(),
        unique.len(),
        "no message went to two consumers"
    );
    assert_eq!(unique, sent, "every message was delivered");
}

/// A batch is the oldest messages of its topic in order, at most the number asked for, each leased
/// to the one consumer; acknowledging the batch removes exactly those, and two consumers taking batches
/// at once never share a message.
async fn batches_are_taken_in_order_and_settled_together<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = Arc::new(adapter.start(&t, patient(), LONG_LEASE).await);
    assert!(
        bus.receive_many("jobs", NOW, 10).await.unwrap().is_empty(),
        "nothing there: an empty batch"
    );
    let mut tx = t.db.begin().await.unwrap();
    for i in 0..25u8 {
        bus.publish(&mut tx, &Message::new("jobs", vec![i]))
            .await
            .unwrap();
    }
    bus.publish(&mut tx, &Message::new("other", vec![99]))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    // The relay may still be moving messages: take until ten are held.
    let mut first = Vec::new();
    while first.len() < 10 {
        let got = bus
            .receive_many("jobs", SOON, 10 - first.len())
            .await
            .unwrap();
        assert!(!got.is_empty(), "published messages arrive");
        first.extend(got);
    }
    let bodies: Vec<u8> = first.iter().map(|d| d.message.body[0]).collect();
    assert_eq!(bodies, (0..10).collect::<Vec<u8>>(), "the oldest, in order");
    assert!(first.iter().all(|d| d.attempt == 1));
    bus.ack_many(first).await.unwrap();

    // Two consumers drain the rest in batches at once.
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let bus = bus.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let batch = bus
                        .receive_many("jobs", Duration::from_secs(1), 4)
                        .await
                        .unwrap();
                    if batch.is_empty() {
                        break got;
                    }
                    assert!(batch.len() <= 4, "no more than asked for");
                    got.extend(batch.iter().map(|d| d.message.body[0]));
                    bus.ack_many(batch).await.unwrap();
                }
            })
        })
        .collect();
    let mut rest = Vec::new();
    for c in consumers {
        rest.extend(c.await.unwrap());
    }
    rest.sort_unstable();
    assert_eq!(
        rest,
        (10..25).collect::<Vec<u8>>(),
        "each of the others exactly once"
    );
    assert!(
        bus.receive("jobs", NOW).await.unwrap().is_none(),
        "acknowledged batches are gone"
    );
    let other = bus.receive_many("other", SOON, 10).await.unwrap();
    assert_eq!(other.len(), 1, "other topics untouched");
}

/// Messages published together in one transaction arrive as each would alone: all once it commits, in
/// the order given, each on its own topic with its body and trace context; none if it rolls back. More
/// than one statement's worth (200 on the embedded queue) still arrives whole.
async fn messages_published_together_arrive_as_each_alone<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start(&t, patient(), LONG_LEASE).await;
    let messages: Vec<Message> = (0..250u32)
        .map(|i| {
            let topic = if i % 5 == 0 { "other" } else { "jobs" };
            Message::new(topic, i.to_be_bytes().to_vec()).with_traceparent(
                (i % 2 == 0)
                    .then(|| "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
            )
        })
        .collect();

    let mut tx = t.db.begin().await.unwrap();
    bus.publish_many(&mut tx, &messages[..10]).await.unwrap();
    tx.rollback().await.unwrap();
    assert!(
        bus.receive("jobs", Duration::from_millis(300))
            .await
            .unwrap()
            .is_none(),
        "a rolled-back change announces nothing"
    );

    let mut tx = t.db.begin().await.unwrap();
    bus.publish_many(&mut tx, &[]).await.unwrap();
    bus.publish_many(&mut tx, &messages).await.unwrap();
    tx.commit().await.unwrap();
    for topic in ["jobs", "other"] {
        let expected: Vec<&Message> = messages.iter().filter(|m| m.topic == topic).collect();
        let mut received = Vec::new();
        while received.len() < expected.len() {
            let batch = bus.receive_many(topic, SOON, 100).await.unwrap();
            assert!(
                !batch.is_empty(),
                "{} of {} on {topic}",
                received.len(),
                expected.len()
            );
            received.extend(batch.iter().map(|d| d.message.clone()));
            bus.ack_many(batch).await.unwrap();
        }
        let received: Vec<&Message> = received.iter().collect();
        assert_eq!(
            received, expected,
            "every message of {topic}, in order, intact"
        );
        assert!(bus.receive(topic, NOW).await.unwrap().is_none());
    }
}

/// Publishes, in one transaction each, `backlog` messages of share `evil` and then two of `acme`.
async fn publish_backlog_then_two(bus: &impl Bus, t: &TestDb, backlog: u8) {
    let mut tx = t.db.begin().await.unwrap();
    for i in 0..backlog {
        let message = Message::new("jobs", vec![i]).with_share("evil");
        bus.publish(&mut tx, &message).await.unwrap();
    }
    tx.commit().await.unwrap();
    let mut tx = t.db.begin().await.unwrap();
    for i in 0..2 {
        let message = Message::new("jobs", vec![200 + i]).with_share("acme");
        bus.publish(&mut tx, &message).await.unwrap();
    }
    tx.commit().await.unwrap();
}

/// Where in the order of delivery `acme`'s two messages came (1 is first).
fn places_of_acme(order: &[Message]) -> Vec<usize> {
    let places: Vec<usize> = (1..=order.len())
        .filter(|i| order[i - 1].share == "acme")
        .collect();
    assert_eq!(places.len(), 2, "both of acme's messages arrive");
    places
}

/// Messages are handed out share by share: a company that publishes two messages behind another's
/// backlog of forty gets them within a few deliveries (at most the broker's window of the other's come
/// first), not after the forty. Each share's messages stay in order.
async fn a_share_with_a_backlog_does_not_keep_another_waiting<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start_windowed(&t, 4).await;
    publish_backlog_then_two(&bus, &t, 40).await;
    let waiting = bus.waiting("jobs").await.unwrap();
    let total: u64 = waiting.iter().map(|(_, n)| n).sum();
    assert!(
        (38..=42).contains(&total),
        "all but the broker's window wait in the database: {waiting:?}"
    );
    assert!(waiting
        .iter()
        .all(|(share, _)| share == "acme" || share == "evil"));
    let mut order = Vec::new();
    while let Some(d) = bus.receive("jobs", SOON).await.unwrap() {
        order.push(d.message.clone());
        bus.ack(d).await.unwrap();
        if order.len() == 42 {
            break;
        }
    }
    assert_eq!(order.len(), 42, "every message arrives");
    let places = places_of_acme(&order);
    assert!(places[1] <= 10, "acme's came at {places:?} of 42");
    let evil: Vec<u8> = order
        .iter()
        .filter(|m| m.share == "evil")
        .map(|m| m.body[0])
        .collect();
    assert_eq!(
        evil,
        (0..40).collect::<Vec<u8>>(),
        "a share's messages in order"
    );
    // The relay forgets a message once the broker has confirmed it, which can come after a consumer
    // has taken it: nothing waits soon after.
    let deadline = tokio::time::Instant::now() + SOON;
    loop {
        let waiting = bus.waiting("jobs").await.unwrap();
        if waiting.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "nothing waits: {waiting:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A batch is split between the shares with messages ready: another company's backlog does not fill
/// every batch while a company's messages wait.
async fn batches_are_shared_between_shares<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let bus = adapter.start_windowed(&t, 4).await;
    publish_backlog_then_two(&bus, &t, 40).await;
    let mut order = Vec::new();
    while order.len() < 42 {
        let batch = bus.receive_many("jobs", SOON, 10).await.unwrap();
        assert!(!batch.is_empty(), "every message arrives");
        order.extend(batch.iter().map(|d| d.message.clone()));
        bus.ack_many(batch).await.unwrap();
    }
    let places = places_of_acme(&order);
    assert!(places[1] <= 12, "acme's came at {places:?} of 42");
}

/// A consumer that cannot attempt a message now (what it needs is busy) puts it off: it comes back after
/// the wait as the same attempt, with its share, and a later failure counts as usual.
async fn a_message_put_off_comes_back_without_counting_an_attempt<A: Adapter>(backend: Backend) {
    let (adapter, t) = (A::new(), bus_db(backend).await);
    let policy = RetryPolicy {
        max_attempts: 5,
        first_wait: Duration::from_millis(200),
        max_wait: Duration::from_millis(200),
    };
    let bus = adapter.start(&t, policy, LONG_LEASE).await;
    let message = Message::new("jobs", b"post".to_vec()).with_share("acme");
    publish(&bus, &t, &message).await;
    for _ in 0..3 {
        let d = bus.receive("jobs", SOON).await.unwrap().expect("delivered");
        assert_eq!((d.attempt, &d.message), (1, &message));
        bus.postpone(d, Duration::from_millis(200)).await.unwrap();
        assert!(
            bus.receive("jobs", NOW).await.unwrap().is_none(),
            "not before its wait"
        );
    }
    let d = bus.receive("jobs", SOON).await.unwrap().expect("back");
    assert_eq!(d.attempt, 1);
    assert_eq!(
        bus.retry(d, "failed").await.unwrap(),
        Retried::After(Duration::from_millis(200))
    );
    let d = bus.receive("jobs", SOON).await.unwrap().expect("back");
    assert_eq!((d.attempt, &d.message), (2, &message));
    bus.ack(d).await.unwrap();
}

/// Runs each listed test against each adapter, on both databases.
macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(
                async fn $name(backend: common::testing::Backend) {
                    super::$name::<super::Embedded>(backend).await
                }
            )*
            common::backend_tests!($($name),*);
        }
        mod rabbit {
            $(
                async fn $name(backend: common::testing::Backend) {
                    super::$name::<super::Rabbit>(backend).await
                }
            )*
            common::backend_tests!($($name),*);
        }
    };
}

contract!(
    a_message_exists_once_its_transaction_commits,
    a_waiting_consumer_gets_a_message_published_meanwhile,
    topics_are_separate_and_each_is_first_in_first_out,
    a_message_whose_consumer_dies_is_delivered_again,
    failures_wait_longer_each_time_then_the_message_is_a_dead_letter,
    a_consumer_may_set_its_own_wait_and_attempt_count,
    a_consumer_at_work_keeps_its_lease,
    a_poison_message_is_a_dead_letter_at_once,
    dead_letters_are_counted_and_replayed_oldest_first,
    concurrent_consumers_never_share_a_message,
    batches_are_taken_in_order_and_settled_together,
    messages_published_together_arrive_as_each_alone,
    a_share_with_a_backlog_does_not_keep_another_waiting,
    batches_are_shared_between_shares,
    a_message_put_off_comes_back_without_counting_an_attempt,
);
