//! Configuration of the ingestion service. Every key can be set in the file named by `SPEECH_CONFIG` or as
//! `SPEECH_INGEST_<KEY>`; the shared names (`DATABASE_URL`, `SPEECH_SECRET_KEY`, `SPEECH_AUTH_URL`, ...)
//! apply too. docs/configuration.md lists every key.

use std::net::IpAddr;
use std::path::PathBuf;

use common::config::{require_http_url, CommonSettings, ConfigError, ServiceConfig};
use common::jwt::VerifierConfig;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct IngestConfig {
    #[serde(flatten)]
    pub common: CommonSettings,
    /// Where this service reaches the token service (its JWKS), e.g. `http://auth:8081`.
    pub auth_url: String,
    /// A MaxMind-format city database (GeoIP2 or GeoLite2 City, `.mmdb`); without it events get no place.
    pub geoip_db: Option<PathBuf>,
    /// Proxies whose `X-Forwarded-For` is believed, as addresses or CIDR networks
    /// (`10.0.0.0/8,127.0.0.1`). Without them the client address is the connection's peer.
    pub trusted_proxies: String,
    /// The largest body `/track` reads, in bytes, as sent (gzip or not).
    pub max_body_bytes: usize,
    /// The largest body once a gzip body is inflated, in bytes.
    pub max_inflated_bytes: usize,
    /// How far in the future an event's time may lie before the event is refused, in seconds.
    pub future_margin_secs: i64,
    /// How long an `insert_id` is remembered: a retried event within this window is stored once.
    pub dedup_window_secs: i64,
    /// Tasks that write batches to the database; batches waiting at once are written together.
    pub writers: usize,
    /// How long a replica reuses a token's revocation answer.
    pub revocation_cache_ms: u64,
    /// Events per second one project may send to one replica; 0 is no limit.
    pub rate_limit_events_per_sec: u64,
    /// Seconds of that rate a project may send at once, as a burst.
    pub rate_limit_burst_secs: f64,
    /// Days events are kept: older ones are refused, and the months past them removed (`retention`);
    /// 0 keeps them for ever.
    pub retention_days: u32,
}

/// A hundred years: past it, the oldest accepted time would precede the earliest accepted at all.
const MAX_RETENTION_DAYS: u32 = 36_500;

impl Default for IngestConfig {
    fn default() -> Self {
        IngestConfig {
            common: CommonSettings::with_addr("127.0.0.1:8084"),
            auth_url: "http://127.0.0.1:8081".into(),
            geoip_db: None,
            trusted_proxies: String::new(),
            max_body_bytes: 4 * 1024 * 1024,
            max_inflated_bytes: 16 * 1024 * 1024,
            future_margin_secs: 3600,
            dedup_window_secs: 7 * 24 * 3600,
            writers: 2,
            revocation_cache_ms: 1000,
            rate_limit_events_per_sec: 50_000,
            rate_limit_burst_secs: 2.0,
            retention_days: 0,
        }
    }
}

impl ServiceConfig for IngestConfig {
    const ENV_PREFIX: &'static str = "SPEECH_INGEST_";

    fn common(&self) -> &CommonSettings {
        &self.common
    }

    fn validate(&self) -> Result<(), ConfigError> {
        require_http_url("auth_url", &self.auth_url)?;
        self.proxies()?;
        if self.max_body_bytes < 1024 || self.max_inflated_bytes < self.max_body_bytes {
            return Err(ConfigError(format!(
                "max_body_bytes must be at least 1024 and max_inflated_bytes at least max_body_bytes, got {} and {}",
                self.max_body_bytes, self.max_inflated_bytes
            )));
        }
        if self.future_margin_secs < 0 || self.dedup_window_secs < 0 {
            return Err(ConfigError(
                "future_margin_secs and dedup_window_secs must not be negative".into(),
            ));
        }
        if !(self.rate_limit_burst_secs.is_finite() && self.rate_limit_burst_secs > 0.0) {
            return Err(ConfigError(format!(
                "rate_limit_burst_secs must be a positive number, got {}",
                self.rate_limit_burst_secs
            )));
        }
        if self.retention_days > MAX_RETENTION_DAYS {
            return Err(ConfigError(format!(
                "retention_days must be at most {MAX_RETENTION_DAYS} (0 keeps events for ever), got {}",
                self.retention_days
            )));
        }
        if self.writers == 0 {
            return Err(ConfigError("writers must be at least 1".into()));
        }
        Ok(())
    }
}

impl IngestConfig {
    /// How access tokens are verified: keys from `auth_url`, issuers from `public_auth_url`.
    pub fn verifier_config(&self) -> VerifierConfig {
        self.common.verifier_config(&self.auth_url)
    }

    /// The trusted proxies, parsed.
    pub fn proxies(&self) -> Result<Vec<Network>, ConfigError> {
        self.trusted_proxies
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                Network::parse(entry).ok_or_else(|| {
                    ConfigError(format!(
                        "trusted_proxies: {entry:?} is neither an address nor a CIDR network"
                    ))
                })
            })
            .collect()
    }
}

/// An address range: an address and how many leading bits of it count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    /// `10.0.0.0/8`, `::1`, `fd00::/8`; a bare address is a network of one.
    pub fn parse(text: &str) -> Option<Network> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address.parse::<IpAddr>().ok()?, Some(prefix)),
            None => (text.parse::<IpAddr>().ok()?, None),
        };
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= bits)?,
            None => bits,
        };
        Some(Network { address, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(net) as u128, 32, self.prefix)
                    == masked(u32::from(ip) as u128, 32, self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), 128, self.prefix)
                    == masked(u128::from(ip), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// An IPv4 address that arrived mapped into IPv6 (`::ffff:a.b.c.d`) compares as IPv4.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn masked(value: u128, bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        value >> (bits - prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_match_by_prefix() {
        let private = Network::parse("10.0.0.0/8").unwrap();
        assert!(private.contains("10.200.1.2".parse().unwrap()));
        assert!(!private.contains("11.0.0.1".parse().unwrap()));
        assert!(private.contains("::ffff:10.1.2.3".parse().unwrap()));
        let one = Network::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6 = Network::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("fe80::1".parse().unwrap()));
        assert!(Network::parse("0.0.0.0/0")
            .unwrap()
            .contains("8.8.8.8".parse().unwrap()));
        for bad in ["10.0.0.0/33", "nonsense", "10.0.0/8", "::1/129"] {
            assert!(Network::parse(bad).is_none(), "{bad}");
        }
    }
}
