//! A writer of MaxMind DB files (binary format 2.0) holding GeoIP2-City-shaped records, so that tests,
//! this crate's and other crates' integration tests, can build a geo database: nothing may be downloaded
//! in a test, and no crate of the dependency graph writes the format.
//!
//! The file is what the format's specification describes: an IPv6 search tree (IPv4 networks under
//! ::/96, i.e. ::a.b.c.d), the 16 zero bytes that separate it from the data section, the data section,
//! and the metadata map after "\xAB\xCD\xEFMaxMind.com". Identical records are written once and shared
//! by their networks; no pointers are used within records. Unlike MaxMind's own files, ::ffff:0:0/96 and
//! 2002::/16 are not aliased to the IPv4 networks: `Enricher::locate` turns mapped addresses back into
//! IPv4 before the lookup.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Networks and their places, to be written as one MaxMind DB file.
pub struct MmdbWriter {
    database_type: String,
    networks: Vec<Network>,
}

struct Network {
    /// The network's address as a 128-bit IPv6 address (IPv4 as ::a.b.c.d), host bits cleared.
    bits: u128,
    /// Prefix length in the IPv6 tree (an IPv4 /24 is a /120).
    prefix: u8,
    record: Record,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Record {
    city: Option<String>,
    state: Option<String>,
    country_iso: Option<String>,
}

/// Marks the start of the metadata; the last occurrence in the file counts.
const METADATA_MARKER: &[u8] = b"\xAB\xCD\xEFMaxMind.com";
const DATA_SECTION_SEPARATOR: [u8; 16] = [0; 16];

impl MmdbWriter {
    /// An empty database whose metadata says `database_type` (e.g. "GeoLite2-City").
    pub fn new(database_type: &str) -> Self {
        MmdbWriter {
            database_type: database_type.to_owned(),
            networks: Vec::new(),
        }
    }

    /// Adds a network ("81.2.69.0/24", "2a02:db8::/32") with its place; parts given as None are left
    /// out of the record. A network inside another one wins for its addresses (longest prefix), whatever
    /// the order of the inserts; inserting the same network again replaces its record.
    ///
    /// # Panics
    /// When `network` is not an address, a slash and a prefix length that fits the address.
    pub fn insert(
        &mut self,
        network: &str,
        city: Option<&str>,
        state: Option<&str>,
        country_iso: Option<&str>,
    ) {
        let (bits, prefix) = parse_network(network);
        self.networks.push(Network {
            bits,
            prefix,
            record: Record {
                city: city.map(str::to_owned),
                state: state.map(str::to_owned),
                country_iso: country_iso.map(str::to_owned),
            },
        });
    }

    /// The whole file, with the smallest record size (24 or 28 bits) that holds its tree.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    /// Writes [`Self::to_bytes`] to `path`, replacing the file if there is one.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_bytes())
    }

    fn encode(&self, record_size: Option<u16>) -> Vec<u8> {
        let mut data = Vec::new();
        let mut offsets: HashMap<&Record, u32> = HashMap::new();
        for network in &self.networks {
            offsets.entry(&network.record).or_insert_with(|| {
                let offset = u32::try_from(data.len()).expect("data section under 4 GiB");
                record_value(&network.record).encode(&mut data);
                offset
            });
        }

        let nodes = self.tree(&offsets);
        let node_count = u32::try_from(nodes.len()).expect("fewer than 2^32 nodes");
        let data_len = u32::try_from(data.len()).expect("data section under 4 GiB");
        let value = |slot: Slot| -> u32 {
            match slot {
                Slot::Empty => node_count,
                Slot::Node(n) => n,
                Slot::Data(offset) => node_count + DATA_SECTION_SEPARATOR.len() as u32 + offset,
            }
        };
        let largest =
            u64::from(node_count) + DATA_SECTION_SEPARATOR.len() as u64 + u64::from(data_len);
        let record_size = record_size.unwrap_or(if largest < 1 << 24 {
            24
        } else if largest < 1 << 28 {
            28
        } else {
            panic!("a test database of {largest} tree and data entries needs 32-bit records")
        });
        assert!(
            largest < 1 << record_size,
            "{record_size}-bit records cannot hold {largest}"
        );

        let mut out =
            Vec::with_capacity(nodes.len() * usize::from(record_size) / 4 + data.len() + 512);
        for [left, right] in nodes {
            let (l, r) = (value(left), value(right));
            match record_size {
                24 => {
                    out.extend_from_slice(&l.to_be_bytes()[1..]);
                    out.extend_from_slice(&r.to_be_bytes()[1..]);
                }
                // The middle byte carries the high nibble of each record: left's above, right's below.
                28 => {
                    out.extend_from_slice(&l.to_be_bytes()[1..]);
                    out.push((((l >> 24) & 0x0F) << 4) as u8 | ((r >> 24) & 0x0F) as u8);
                    out.extend_from_slice(&r.to_be_bytes()[1..]);
                }
                32 => {
                    out.extend_from_slice(&l.to_be_bytes());
                    out.extend_from_slice(&r.to_be_bytes());
                }
                other => panic!("record size {other} is not 24, 28 or 32"),
            }
        }
        out.extend_from_slice(&DATA_SECTION_SEPARATOR);
        out.extend_from_slice(&data);
        out.extend_from_slice(METADATA_MARKER);

        let build_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Value::Map(vec![
            ("node_count", Value::U32(node_count)),
            ("record_size", Value::U16(record_size)),
            ("ip_version", Value::U16(6)),
            ("database_type", Value::Str(&self.database_type)),
            ("languages", Value::Array(vec![Value::Str("en")])),
            ("binary_format_major_version", Value::U16(2)),
            ("binary_format_minor_version", Value::U16(0)),
            ("build_epoch", Value::U64(build_epoch)),
            (
                "description",
                Value::Map(vec![("en", Value::Str("Networks and places for tests"))]),
            ),
        ])
        .encode(&mut out);
        out
    }

    /// The search tree, node 0 its root. Networks go in shortest prefix first, so that a longer one
    /// always lands inside a shorter one: the shorter one's record is pushed down to both children of
    /// a new node, and the longer one replaces it on its own path only.
    fn tree(&self, offsets: &HashMap<&Record, u32>) -> Vec<[Slot; 2]> {
        let mut networks: Vec<&Network> = self.networks.iter().collect();
        networks.sort_by_key(|n| n.prefix);

        let mut nodes = vec![[Slot::Empty; 2]];
        for network in networks {
            let data = Slot::Data(offsets[&network.record]);
            if network.prefix == 0 {
                nodes[0] = [data; 2];
                continue;
            }
            let mut node = 0;
            for depth in 0..network.prefix {
                let bit = ((network.bits >> (127 - depth)) & 1) as usize;
                if depth + 1 == network.prefix {
                    nodes[node][bit] = data;
                    break;
                }
                node = match nodes[node][bit] {
                    Slot::Node(next) => next as usize,
                    covering => {
                        let next = nodes.len();
                        let children = match covering {
                            Slot::Data(_) => [covering; 2],
                            _ => [Slot::Empty; 2],
                        };
                        nodes.push(children);
                        nodes[node][bit] = Slot::Node(next as u32);
                        next
                    }
                };
            }
        }
        nodes
    }
}

#[derive(Clone, Copy)]
enum Slot {
    Empty,
    Node(u32),
    /// Offset in the data section.
    Data(u32),
}

fn parse_network(network: &str) -> (u128, u8) {
    let Some((address, prefix)) = network.split_once('/') else {
        bad_network(network)
    };
    let (Ok(address), Ok(prefix)) = (address.parse::<IpAddr>(), prefix.parse::<u8>()) else {
        bad_network(network)
    };
    let (bits, prefix) = match address {
        IpAddr::V4(v4) if prefix <= 32 => (u128::from(u32::from(v4)), prefix + 96),
        IpAddr::V6(v6) if prefix <= 128 => (u128::from(v6), prefix),
        _ => bad_network(network),
    };
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix))
    };
    (bits & mask, prefix)
}

fn bad_network(network: &str) -> ! {
    panic!("{network:?} is not a network such as 81.2.69.0/24 or 2a02:db8::/32")
}

/// The record as GeoIP2-City lays it out, with only the parts that are known.
fn record_value(record: &Record) -> Value<'_> {
    fn names(name: &str) -> Value<'_> {
        Value::Map(vec![("names", Value::Map(vec![("en", Value::Str(name))]))])
    }
    let mut fields = Vec::new();
    if let Some(city) = &record.city {
        fields.push(("city", names(city)));
    }
    if let Some(iso) = &record.country_iso {
        fields.push(("country", Value::Map(vec![("iso_code", Value::Str(iso))])));
    }
    if let Some(state) = &record.state {
        fields.push(("subdivisions", Value::Array(vec![names(state)])));
    }
    Value::Map(fields)
}

/// The data types these files need, in the format's encoding.
enum Value<'a> {
    Str(&'a str),
    U16(u16),
    U32(u32),
    U64(u64),
    Map(Vec<(&'a str, Value<'a>)>),
    Array(Vec<Value<'a>>),
}

const TYPE_UTF8: u8 = 2;
const TYPE_UINT16: u8 = 5;
const TYPE_UINT32: u8 = 6;
const TYPE_MAP: u8 = 7;
const TYPE_UINT64: u8 = 9;
const TYPE_ARRAY: u8 = 11;

impl Value<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Str(s) => {
                control(out, TYPE_UTF8, s.len());
                out.extend_from_slice(s.as_bytes());
            }
            Value::U16(n) => uint(out, TYPE_UINT16, &n.to_be_bytes()),
            Value::U32(n) => uint(out, TYPE_UINT32, &n.to_be_bytes()),
            Value::U64(n) => uint(out, TYPE_UINT64, &n.to_be_bytes()),
            Value::Map(entries) => {
                control(out, TYPE_MAP, entries.len());
                for (key, value) in entries {
                    Value::Str(key).encode(out);
                    value.encode(out);
                }
            }
            Value::Array(items) => {
                control(out, TYPE_ARRAY, items.len());
                for item in items {
                    item.encode(out);
                }
            }
        }
    }
}

/// Unsigned integers are written in as few bytes as they need (none for zero).
fn uint(out: &mut Vec<u8>, type_number: u8, big_endian: &[u8]) {
    let significant = &big_endian[big_endian.iter().take_while(|&&b| b == 0).count()..];
    control(out, type_number, significant.len());
    out.extend_from_slice(significant);
}

/// The control byte: the type in the top three bits (0 and an extra byte for types above 7), the size in
/// the low five, with sizes of 29 and more continued in one to three following bytes.
fn control(out: &mut Vec<u8>, type_number: u8, size: usize) {
    let (size_bits, extra): (u8, Vec<u8>) = match size {
        0..29 => (size as u8, vec![]),
        29..285 => (29, vec![(size - 29) as u8]),
        285..65_821 => (30, ((size - 285) as u16).to_be_bytes().to_vec()),
        65_821..16_843_037 => (31, ((size - 65_821) as u32).to_be_bytes()[1..].to_vec()),
        _ => panic!("a value of size {size} is too large for the format"),
    };
    if type_number <= 7 {
        out.push(type_number << 5 | size_bits);
    } else {
        out.push(size_bits);
        out.push(type_number - 7);
    }
    out.extend_from_slice(&extra);
}

#[cfg(test)]
mod tests {
    use super::*;
    use maxminddb::{geoip2, Reader};

    /// (city, state, country) as the reader decodes them, None when the address has no record.
    type Place = Option<(Option<String>, Option<String>, Option<String>)>;

    fn lookup(reader: &Reader<Vec<u8>>, ip: &str) -> Place {
        let found = reader.lookup(ip.parse().unwrap()).unwrap();
        let city: geoip2::City<'_> = found.decode().unwrap()?;
        let own = |s: Option<&str>| s.map(str::to_owned);
        Some((
            own(city.city.names.english),
            own(city.subdivisions.first().and_then(|s| s.names.english)),
            own(city.country.iso_code),
        ))
    }

    fn place(city: &str, state: &str, country: &str) -> Place {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Some((some(city), some(state), some(country)))
    }

    fn read(bytes: Vec<u8>) -> Reader<Vec<u8>> {
        let reader = Reader::from_source(bytes).unwrap();
        reader.verify().unwrap();
        reader
    }

    fn sample() -> MmdbWriter {
        let mut writer = MmdbWriter::new("GeoIP2-City");
        writer.insert("81.2.69.0/24", Some("London"), Some("England"), Some("GB"));
        writer.insert(
            "175.16.199.0/24",
            Some("Changchun"),
            Some("Jilin Sheng"),
            Some("CN"),
        );
        writer.insert(
            "216.160.83.56/29",
            Some("Milton"),
            Some("Washington"),
            Some("US"),
        );
        writer.insert(
            "89.160.20.112/28",
            Some("Linköping"),
            Some("Östergötland County"),
            Some("SE"),
        );
        writer.insert(
            "2a02:db8::/32",
            Some("Berlin"),
            Some("Land Berlin"),
            Some("DE"),
        );
        writer.insert(
            "2001:480::/32",
            Some("San Diego"),
            Some("California"),
            Some("US"),
        );
        writer.insert("2c0f:ff40::/26", None, None, Some("ZA"));
        writer
    }

    #[test]
    fn the_reader_decodes_ipv4_and_ipv6_networks() {
        let reader = read(sample().to_bytes());
        let metadata = reader.metadata();
        assert_eq!(metadata.database_type, "GeoIP2-City");
        assert_eq!(metadata.ip_version, 6);
        assert_eq!(metadata.record_size, 24);
        assert_eq!(metadata.binary_format_major_version, 2);
        assert_eq!(metadata.binary_format_minor_version, 0);
        assert_eq!(metadata.languages, ["en"]);
        assert!(metadata.build_epoch > 1_700_000_000);

        assert_eq!(
            lookup(&reader, "81.2.69.160"),
            place("London", "England", "GB")
        );
        assert_eq!(
            lookup(&reader, "81.2.69.0"),
            place("London", "England", "GB")
        );
        assert_eq!(
            lookup(&reader, "81.2.69.255"),
            place("London", "England", "GB")
        );
        assert_eq!(
            lookup(&reader, "175.16.199.37"),
            place("Changchun", "Jilin Sheng", "CN")
        );
        assert_eq!(
            lookup(&reader, "216.160.83.63"),
            place("Milton", "Washington", "US")
        );
        assert_eq!(
            lookup(&reader, "89.160.20.120"),
            place("Linköping", "Östergötland County", "SE")
        );
        assert_eq!(
            lookup(&reader, "2a02:db8:ffff::1"),
            place("Berlin", "Land Berlin", "DE")
        );
        assert_eq!(
            lookup(&reader, "2001:480:10::1"),
            place("San Diego", "California", "US")
        );
        assert_eq!(lookup(&reader, "2c0f:ff7f::1"), place("", "", "ZA"));

        let found = reader.lookup("81.2.69.160".parse().unwrap()).unwrap();
        assert_eq!(found.network().unwrap().to_string(), "81.2.69.0/24");
        let found = reader.lookup("2a02:db8:1::".parse().unwrap()).unwrap();
        assert_eq!(found.network().unwrap().to_string(), "2a02:db8::/32");
    }

    #[test]
    fn addresses_outside_every_network_have_no_record() {
        let reader = read(sample().to_bytes());
        for ip in [
            "81.2.68.255",
            "81.2.70.0",
            "216.160.83.55",
            "216.160.83.64",
            "127.0.0.1",
            "10.0.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "2a02:db9::1",
            "2c0f:ff80::",
            "::1",
            "::",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        ] {
            assert_eq!(lookup(&reader, ip), None, "{ip}");
            assert!(
                !reader.lookup(ip.parse().unwrap()).unwrap().has_data(),
                "{ip}"
            );
        }
    }

    #[test]
    fn the_longest_prefix_wins_in_any_insert_order() {
        let networks = [
            ("81.0.0.0/8", "", "", "EU"),
            ("81.2.0.0/16", "", "England", "GB"),
            ("81.2.69.0/24", "London", "England", "GB"),
            ("81.2.69.128/25", "Croydon", "England", "GB"),
            ("2a02::/16", "", "", "EU"),
            ("2a02:db8::/32", "Berlin", "Land Berlin", "DE"),
            ("2a02:db8:8000::/33", "Potsdam", "Brandenburg", "DE"),
        ];
        let given = |s: &'static str| (!s.is_empty()).then_some(s);
        for order in [
            [0, 1, 2, 3, 4, 5, 6],
            [6, 5, 4, 3, 2, 1, 0],
            [2, 0, 3, 5, 1, 6, 4],
        ] {
            let mut writer = MmdbWriter::new("GeoLite2-City");
            for i in order {
                let (network, city, state, country) = networks[i];
                writer.insert(network, given(city), given(state), given(country));
            }
            let reader = read(writer.to_bytes());
            assert_eq!(
                lookup(&reader, "81.9.9.9"),
                place("", "", "EU"),
                "{order:?}"
            );
            assert_eq!(
                lookup(&reader, "81.2.1.1"),
                place("", "England", "GB"),
                "{order:?}"
            );
            assert_eq!(
                lookup(&reader, "81.2.69.1"),
                place("London", "England", "GB"),
                "{order:?}"
            );
            assert_eq!(
                lookup(&reader, "81.2.69.200"),
                place("Croydon", "England", "GB"),
                "{order:?}"
            );
            assert_eq!(lookup(&reader, "82.0.0.1"), None, "{order:?}");
            assert_eq!(
                lookup(&reader, "2a02:1::1"),
                place("", "", "EU"),
                "{order:?}"
            );
            assert_eq!(
                lookup(&reader, "2a02:db8:1::1"),
                place("Berlin", "Land Berlin", "DE"),
                "{order:?}"
            );
            assert_eq!(
                lookup(&reader, "2a02:db8:8001::1"),
                place("Potsdam", "Brandenburg", "DE"),
                "{order:?}"
            );
            assert_eq!(lookup(&reader, "2a03::1"), None, "{order:?}");

            let found = reader.lookup("81.2.69.1".parse().unwrap()).unwrap();
            assert_eq!(
                found.network().unwrap().to_string(),
                "81.2.69.0/25",
                "{order:?}"
            );
        }
    }

    #[test]
    fn inserting_a_network_again_replaces_its_record() {
        let mut writer = MmdbWriter::new("GeoLite2-City");
        writer.insert("81.2.69.0/24", Some("London"), None, Some("GB"));
        writer.insert("81.2.69.7/24", Some("Londres"), None, Some("GB"));
        let reader = read(writer.to_bytes());
        assert_eq!(lookup(&reader, "81.2.69.1"), place("Londres", "", "GB"));
    }

    #[test]
    fn every_record_size_reads_the_same() {
        let writer = sample();
        for record_size in [24, 28, 32] {
            let reader = read(writer.encode(Some(record_size)));
            assert_eq!(reader.metadata().record_size, record_size);
            assert_eq!(
                lookup(&reader, "81.2.69.160"),
                place("London", "England", "GB")
            );
            assert_eq!(
                lookup(&reader, "2001:480:10::1"),
                place("San Diego", "California", "US")
            );
            assert_eq!(lookup(&reader, "81.2.70.0"), None);
        }
    }

    #[test]
    fn long_strings_use_every_size_encoding() {
        let mut writer = MmdbWriter::new("GeoLite2-City");
        let names: Vec<String> = [28, 29, 284, 285, 65_820, 65_821, 70_000]
            .iter()
            .map(|&n| "x".repeat(n))
            .collect();
        for (i, name) in names.iter().enumerate() {
            writer.insert(
                &format!("10.0.{i}.0/24"),
                Some(name),
                Some("é".repeat(200).as_str()),
                None,
            );
        }
        let reader = read(writer.to_bytes());
        for (i, name) in names.iter().enumerate() {
            let (city, state, _) = lookup(&reader, &format!("10.0.{i}.1")).unwrap();
            assert_eq!(city.as_deref(), Some(name.as_str()));
            assert_eq!(state, Some("é".repeat(200)));
        }
    }

    #[test]
    fn an_empty_database_opens() {
        let reader = read(MmdbWriter::new("GeoLite2-City").to_bytes());
        assert_eq!(lookup(&reader, "81.2.69.160"), None);
        assert_eq!(lookup(&reader, "2a02:db8::1"), None);
    }

    #[test]
    #[should_panic(expected = "is not a network")]
    fn a_prefix_too_long_for_ipv4_is_refused() {
        MmdbWriter::new("GeoLite2-City").insert("81.2.69.0/33", None, None, None);
    }
}
