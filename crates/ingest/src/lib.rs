//! The event-ingestion service: tracking batches posted to a project's app key are validated event by
//! event, enriched (browser and operating system from the user agent, place from the address) and stored
//! before the answer; a project's company reads them back with a bearer token (docs/ingest-api.md).

pub mod enrich;
