//! Where a `session_ip` is: a lookup in a MaxMind-format database (GeoIP2-City or GeoLite2-City layout)
//! read into memory once, so that a lookup is a walk of at most 128 tree nodes and a decode, with no I/O.

use std::net::IpAddr;
use std::path::Path;

use anyhow::Context;
use maxminddb::{geoip2, Reader};
use serde::Serialize;

/// Where an address is, from the configured database. Unknown parts are None.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Location {
    pub city: Option<String>,
    /// The first (largest) subdivision's English name: a US state, a German Land, an English country...
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2 code, e.g. "DE".
    pub country: Option<String>,
}

pub(crate) struct GeoDb {
    reader: Reader<Vec<u8>>,
}

impl GeoDb {
    pub(crate) fn open(path: &Path) -> anyhow::Result<GeoDb> {
        let reader = Reader::open_readfile(path)
            .with_context(|| format!("cannot open the geo database {}", path.display()))?;
        Ok(GeoDb { reader })
    }

    /// None when the database has no record for the address, or a record naming neither city, state
    /// nor country (anonymous networks have those).
    pub(crate) fn locate(&self, ip: IpAddr) -> Option<Location> {
        // A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d; the database files them under IPv4.
        let ip = ip.to_canonical();
        let found = self.reader.lookup(ip).ok()?;
        // A record the reader cannot decode counts as none: the event is stored without a place rather
        // than refused.
        let city: geoip2::City<'_> = found.decode().ok().flatten()?;
        let name = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_owned);
        let location = Location {
            city: name(city.city.names.english),
            state: name(city.subdivisions.first().and_then(|s| s.names.english)),
            country: name(city.country.iso_code),
        };
        (location != Location::default()).then_some(location)
    }
}
