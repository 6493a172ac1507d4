//! Enrichment of tracking events: browser, operating system and device from `session_dua`, city, state and
//! country from `session_ip`.

#[cfg(any(test, feature = "testing"))]
pub mod mmdb_writer;
