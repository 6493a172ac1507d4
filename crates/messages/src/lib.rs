//! The bus message contracts. The types are generated at build time from `proto/speech/bus/v1/*.proto`
//! (the one place they are defined); each message is the body of a `common::bus::Message` on its topic.

/// Version 1 of the bus messages.
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/speech.bus.v1.rs"));
}

/// The topic each message goes to.
pub mod topics {
    pub const REINDEX: &str = "analytics.reindex";
    pub const METADATA: &str = "analytics.metadata";
    pub const DELETE: &str = "analytics.delete";
    pub const SCORE: &str = "analytics.score";
    pub const RESCORE: &str = "analytics.rescore";
    pub const TRANSCRIBE: &str = "analytics.transcribe";
    pub const CALLBACK: &str = "analytics.callback";
    /// The topics the analytics workers consume (the queues a RabbitMQ connection of theirs declares).
    pub const ANALYTICS_WORKERS: &[&str] = &[
        REINDEX, METADATA, DELETE, SCORE, RESCORE, TRANSCRIBE, CALLBACK,
    ];
}

pub use prost::{DecodeError, Message};

#[cfg(test)]
mod tests {
    use super::v1::{CallbackDelivery, DeleteScope};
    use super::Message;

    #[test]
    fn messages_round_trip_and_tolerate_fields_they_do_not_know() {
        let job = DeleteScope {
            job_id: "j1".into(),
            company: "acme".into(),
            organization: "support".into(),
            folder: String::new(),
        };
        let bytes = job.encode_to_vec();
        assert_eq!(DeleteScope::decode(bytes.as_slice()).unwrap(), job);

        // A newer sender's extra field (number 15, a string) is skipped by this reader.
        let mut newer = bytes.clone();
        newer.extend_from_slice(&[0x7a, 0x02, b'h', b'i']);
        assert_eq!(DeleteScope::decode(newer.as_slice()).unwrap(), job);

        let delivery = CallbackDelivery {
            delivery_id: "d1".into(),
            company: "acme".into(),
            url: "https://example.com/hook".into(),
            body: b"--b\r\n...".to_vec(),
            content_type: "multipart/form-data; boundary=b".into(),
            request_id: "r1".into(),
            max_attempts: 100,
        };
        let back = CallbackDelivery::decode(delivery.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back, delivery);
        assert!(
            DeleteScope::decode(&b"\xff\xff"[..]).is_err(),
            "garbage is an error, for the consumer to dead-letter"
        );
    }
}
