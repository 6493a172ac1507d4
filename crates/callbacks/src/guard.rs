//! The address guard of callbacks (docs/transcription.md, Callbacks). A callback address comes from a
//! customer, and the service posts to it from inside the operator's network, so an address that reaches
//! loopback, a private range or the cloud's metadata service would let any customer probe or hit what
//! sits behind the firewall. Addresses are checked when a request names them (a clear 400) and again at
//! every delivery, on the very addresses the connection uses: the HTTP client resolves names through
//! `GuardedResolver`, so a name that resolved to a public address at submission and to 127.0.0.1 later
//! (DNS rebinding) is refused then too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Which ranges an operator lets callbacks reach (`SPEECH_CALLBACK_ALLOW_LOOPBACK`,
/// `SPEECH_CALLBACK_ALLOW_PRIVATE`). Link-local, multicast and unspecified addresses are never allowed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    pub allow_loopback: bool,
    pub allow_private: bool,
}

/// Why an address was refused, worded for the customer who gave it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the callback address is not a valid http or https URL: {0}")]
    Invalid(String),
    #[error("the callback address {0} is a loopback address, which callbacks may not reach")]
    Loopback(IpAddr),
    #[error("the callback address {0} is in a private range, which callbacks may not reach")]
    Private(IpAddr),
    #[error("the callback address {0} is not a unicast internet address")]
    Reserved(IpAddr),
    #[error("the callback host {0} could not be resolved")]
    Unresolved(String),
}

/// The kinds of address the guard tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Public,
    Loopback,
    Private,
    Reserved,
}

/// Cloud metadata services outside 169.254.0.0/16, which sit in ranges an operator may allow: Alibaba
/// Cloud's (100.100.100.200, in the carrier-grade NAT range) and AWS's over IPv6 (fd00:ec2::254, a unique
/// local address). They are refused whatever the policy.
const METADATA_V4: Ipv4Addr = Ipv4Addr::new(100, 100, 100, 200);
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

fn kind_v4(ip: Ipv4Addr) -> Kind {
    let [a, b, ..] = ip.octets();
    if ip == METADATA_V4 {
        Kind::Reserved
    } else if ip.is_loopback() {
        Kind::Loopback
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        // RFC 1918 and the carrier-grade NAT range 100.64.0.0/10.
        Kind::Private
    } else if ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || (a == 198 && (18..20).contains(&b))
    {
        // 169.254.0.0/16 holds the cloud metadata service: never reachable, whatever the policy.
        Kind::Reserved
    } else {
        Kind::Public
    }
}

fn kind(ip: IpAddr) -> Kind {
    match ip {
        IpAddr::V4(v4) => kind_v4(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is that IPv4 address.
            if let Some(v4) = v6.to_ipv4_mapped() {
                return kind_v4(v4);
            }
            let segments = v6.segments();
            let [first, second, ..] = segments;
            if v6 == METADATA_V6 {
                Kind::Reserved
            } else if v6.is_loopback() {
                Kind::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                // Unique local addresses fc00::/7.
                Kind::Private
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || first & 0xffc0 == 0xfe80
                // Site-local fec0::/10 (deprecated, still routed inside some networks).
                || first & 0xffc0 == 0xfec0
                // Documentation 2001:db8::/32 and 3fff::/20, the discard prefix 100::/64.
                || (first == 0x2001 && second == 0x0db8)
                || first & 0xfff0 == 0x3ff0
                || (first == 0x0100 && segments[1..4] == [0, 0, 0])
                || is_embedding_v4(v6)
            {
                Kind::Reserved
            } else {
                Kind::Public
            }
        }
    }
}

/// NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32),
/// IPv4-translated (::ffff:0:0:0/96) and IPv4-compatible (::/96) addresses carry an IPv4 address a gateway
/// may route to; they are refused rather than decoded.
fn is_embedding_v4(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    (s[0] == 0x64 && s[1] == 0xff9b)
        || s[0] == 0x2002
        || (s[0] == 0x2001 && s[1] == 0)
        || (s[..4].iter().all(|&x| x == 0) && s[4] == 0xffff && s[5] == 0)
        || s[..6].iter().all(|&x| x == 0)
}

impl AddressPolicy {
    /// Whether a connection to `ip` is allowed.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refused> {
        match kind(ip) {
            Kind::Public => Ok(()),
            Kind::Loopback if self.allow_loopback => Ok(()),
            Kind::Private if self.allow_private => Ok(()),
            Kind::Loopback => Err(Refused::Loopback(ip)),
            Kind::Private => Err(Refused::Private(ip)),
            Kind::Reserved => Err(Refused::Reserved(ip)),
        }
    }

    /// Parses a callback address: http or https, a host, no user name or password (they would be sent
    /// to the receiver and logged), at most 2,048 characters.
    pub fn parse_url(&self, text: &str) -> Result<Url, Refused> {
        let invalid = |why: &str| Refused::Invalid(why.to_string());
        if text.len() > 2048 {
            return Err(invalid("longer than 2048 characters"));
        }
        let url = Url::parse(text.trim()).map_err(|e| Refused::Invalid(e.to_string()))?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(invalid("the scheme must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("it may not carry a user name or password"));
        }
        match url.host() {
            None => Err(invalid("it has no host")),
            Some(Host::Ipv4(ip)) => self.check_ip(IpAddr::V4(ip)).map(|_| url),
            Some(Host::Ipv6(ip)) => self.check_ip(IpAddr::V6(ip)).map(|_| url),
            Some(Host::Domain(_)) => Ok(url),
        }
    }

    /// Parses `text` and resolves its host, refusing it when any address it resolves to is refused (a
    /// name with one public and one private address would otherwise reach the private one at times).
    pub async fn check_url(&self, text: &str) -> Result<Url, Refused> {
        let url = self.parse_url(text)?;
        if let Some(Host::Domain(domain)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(80);
            self.resolve(domain, port).await?;
        }
        Ok(url)
    }

    /// A callback address configured for later (a folder's `callback.url`): checked as `check_url`
    /// checks one a request gives, except that a name that does not resolve now is taken, since it may
    /// by the time it is used. Every upload that uses it and every delivery resolve and check it again.
    pub async fn check_configured_url(&self, text: &str) -> Result<Url, Refused> {
        match self.check_url(text).await {
            Err(Refused::Unresolved(_)) => self.parse_url(text),
            checked => checked,
        }
    }

    /// The addresses of `host`, every one of them allowed, or why not.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|_| Refused::Unresolved(host.to_string()))?
            .collect();
        if addrs.is_empty() {
            return Err(Refused::Unresolved(host.to_string()));
        }
        for addr in &addrs {
            self.check_ip(addr.ip())?;
        }
        Ok(addrs)
    }
}

/// The HTTP client's resolver for callbacks: every name goes through the policy at connection time.
pub struct GuardedResolver {
    pub policy: AddressPolicy,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy;
        Box::pin(async move {
            let addrs = policy.resolve(name.as_str(), 0).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

impl GuardedResolver {
    pub fn shared(policy: AddressPolicy) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver { policy })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn public_addresses_pass_and_internal_ones_are_refused_by_default() {
        let strict = AddressPolicy::default();
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700:4700::1111",
            "100.128.0.1",
        ] {
            assert_eq!(strict.check_ip(ip(public)), Ok(()), "{public}");
        }
        for loopback in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(
                strict.check_ip(ip(loopback)),
                Err(Refused::Loopback(ip(loopback)))
            );
        }
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "fd00::1",
            "::ffff:10.0.0.1",
        ] {
            assert_eq!(
                strict.check_ip(ip(private)),
                Err(Refused::Private(ip(private))),
                "{private}"
            );
        }
        for reserved in [
            "169.254.169.254",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "fe80::1",
            "::",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "::10.0.0.1",
            "::ffff:0:7f00:1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "3fff::1",
            "100::1",
            "fec0::1",
            "100.100.100.200",
            "fd00:ec2::254",
        ] {
            assert_eq!(
                strict.check_ip(ip(reserved)),
                Err(Refused::Reserved(ip(reserved))),
                "{reserved}"
            );
        }
    }

    #[test]
    fn the_operator_may_allow_loopback_and_private_ranges_but_never_link_local() {
        let open = AddressPolicy {
            allow_loopback: true,
            allow_private: true,
        };
        assert_eq!(open.check_ip(ip("127.0.0.1")), Ok(()));
        assert_eq!(open.check_ip(ip("10.0.0.1")), Ok(()));
        for metadata in ["169.254.169.254", "100.100.100.200", "fd00:ec2::254"] {
            assert_eq!(
                open.check_ip(ip(metadata)),
                Err(Refused::Reserved(ip(metadata))),
                "a metadata service, whatever the policy"
            );
        }
        assert_eq!(open.check_ip(ip("100.100.100.201")), Ok(()));
        assert_eq!(open.check_ip(ip("fd00:ec2::253")), Ok(()));
        let loopback_only = AddressPolicy {
            allow_loopback: true,
            allow_private: false,
        };
        assert!(loopback_only.check_ip(ip("192.168.0.1")).is_err());
    }

    #[test]
    fn urls_must_be_http_with_a_host_and_no_credentials() {
        let p = AddressPolicy::default();
        assert!(p.parse_url("https://hooks.example.com/speech?x=1").is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "https://user:pw@example.com/",
            "not a url",
            "http://127.0.0.1:9/",
            "http://[::1]/",
            "http://2130706433/",
            "http://0x7f.1/",
        ] {
            assert!(p.parse_url(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn names_are_resolved_and_every_address_checked() {
        let strict = AddressPolicy::default();
        let refused = strict.check_url("http://localhost:8080/cb").await;
        assert!(refused.unwrap_err().to_string().contains("loopback"));
        let open = AddressPolicy {
            allow_loopback: true,
            allow_private: false,
        };
        assert!(open.check_url("http://localhost:8080/cb").await.is_ok());
        assert!(matches!(
            strict.check_url("http://no-such-host.invalid/").await,
            Err(Refused::Unresolved(_))
        ));
    }

    #[tokio::test]
    async fn a_configured_address_is_checked_but_may_not_resolve_yet() {
        let strict = AddressPolicy::default();
        assert!(strict
            .check_configured_url("http://no-such-host.invalid/cb")
            .await
            .is_ok());
        for (bad, why) in [
            ("http://localhost:8080/cb", "loopback"),
            ("http://127.0.0.1:8080/cb", "loopback"),
            ("http://169.254.169.254/latest/meta-data/", "unicast"),
            ("ftp://no-such-host.invalid/", "scheme"),
        ] {
            let refused = strict.check_configured_url(bad).await.unwrap_err();
            assert!(refused.to_string().contains(why), "{bad}: {refused}");
        }
    }
}
