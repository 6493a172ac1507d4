//! Enrichment of tracking events: browser, operating system and device from `session_dua`, city, state and
//! country from `session_ip`.
//!
//! One [`Enricher`] serves every request worker. Neither lookup does I/O or blocks for long: the geo
//! database is read into memory at [`Enricher::open`], and parsed user agents are cached because parsing
//! runs regular expressions and real traffic repeats the same few thousand user agents.

mod agent;
mod geo;
#[cfg(any(test, feature = "testing"))]
pub mod mmdb_writer;

use std::net::IpAddr;
use std::path::Path;

pub use agent::AgentInfo;
pub use geo::Location;

/// Parsed user agents kept at once. A few thousand cover nearly all of a day's traffic; each entry is a
/// few hundred bytes, so the bound keeps the cache to a few megabytes whatever clients send.
const AGENT_CACHE_CAPACITY: usize = 16_384;

/// Both lookups, shared by all request workers (Send + Sync, no blocking I/O per call).
pub struct Enricher {
    agents: agent::AgentCache,
    geo: Option<geo::GeoDb>,
}

impl Enricher {
    /// Opens the geo database when a path is given; None means no geo data (locate always answers None).
    /// A missing or corrupt file is an error naming the path.
    pub fn open(geo_db: Option<&Path>) -> anyhow::Result<Enricher> {
        Ok(Enricher {
            agents: agent::AgentCache::new(AGENT_CACHE_CAPACITY),
            geo: geo_db.map(geo::GeoDb::open).transpose()?,
        })
    }

    /// What the user agent says about the client; all None when it says nothing recognisable.
    pub fn agent(&self, user_agent: &str) -> AgentInfo {
        self.agents.agent(user_agent)
    }

    /// None when no database is configured, the database has no record for the address (private and
    /// loopback addresses never have one), or its record names no place.
    pub fn locate(&self, ip: IpAddr) -> Option<Location> {
        self.geo.as_ref()?.locate(ip)
    }
}

#[cfg(test)]
mod tests {
    use super::mmdb_writer::MmdbWriter;
    use super::*;

    fn place(city: Option<&str>, state: Option<&str>, country: Option<&str>) -> Option<Location> {
        Some(Location {
            city: city.map(str::to_owned),
            state: state.map(str::to_owned),
            country: country.map(str::to_owned),
        })
    }

    fn temp_path(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("ingest-enrich-{}-{name}", std::process::id()))
    }

    #[test]
    fn enricher_is_shared_between_workers() {
        fn shared<T: Send + Sync>() {}
        shared::<Enricher>();
    }

    #[test]
    fn without_a_database_nothing_is_located() {
        let enricher = Enricher::open(None).unwrap();
        assert_eq!(enricher.locate("81.2.69.160".parse().unwrap()), None);
        let chrome = enricher.agent(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        );
        assert_eq!(chrome.browser.as_deref(), Some("Chrome"));
        assert_eq!(chrome.device_type.as_deref(), Some("desktop"));
    }

    #[test]
    fn locates_from_the_database_file() {
        let mut writer = MmdbWriter::new("GeoLite2-City");
        writer.insert("81.2.69.0/24", Some("London"), Some("England"), Some("GB"));
        writer.insert(
            "2a02:db8::/32",
            Some("Berlin"),
            Some("Land Berlin"),
            Some("DE"),
        );
        writer.insert("89.160.20.0/24", None, None, Some("SE"));
        writer.insert("10.9.0.0/16", None, None, None);
        let path = temp_path("city.mmdb");
        writer.write(&path).unwrap();
        let enricher = Enricher::open(Some(&path)).unwrap();
        std::fs::remove_file(&path).unwrap();

        let at = |ip: &str| enricher.locate(ip.parse().unwrap());
        assert_eq!(
            at("81.2.69.160"),
            place(Some("London"), Some("England"), Some("GB"))
        );
        // The same client seen through a dual-stack socket.
        assert_eq!(
            at("::ffff:81.2.69.160"),
            place(Some("London"), Some("England"), Some("GB"))
        );
        assert_eq!(
            at("2a02:db8:1::7"),
            place(Some("Berlin"), Some("Land Berlin"), Some("DE"))
        );
        assert_eq!(at("89.160.20.1"), place(None, None, Some("SE")));
        // A record that names nothing, and addresses with no record.
        assert_eq!(at("10.9.8.7"), None);
        assert_eq!(at("127.0.0.1"), None);
        assert_eq!(at("192.168.1.1"), None);
        assert_eq!(at("::1"), None);
    }

    #[test]
    fn a_missing_or_corrupt_database_names_its_path() {
        let missing = temp_path("missing.mmdb");
        let err = Enricher::open(Some(&missing)).err().unwrap();
        assert!(
            format!("{err:#}").contains(&missing.display().to_string()),
            "{err:#}"
        );

        let corrupt = temp_path("corrupt.mmdb");
        std::fs::write(&corrupt, b"not a MaxMind database").unwrap();
        let err = Enricher::open(Some(&corrupt)).err().unwrap();
        std::fs::remove_file(&corrupt).unwrap();
        assert!(
            format!("{err:#}").contains(&corrupt.display().to_string()),
            "{err:#}"
        );
    }
}
