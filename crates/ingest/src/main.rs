//! `ingest-service`: the event-ingestion API.

fn main() {}
