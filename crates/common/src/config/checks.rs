//! The configuration's error and the checks of single values that the services' `validate` share.

#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

impl From<figment::Error> for ConfigError {
    fn from(e: figment::Error) -> Self {
        ConfigError(e.to_string())
    }
}

/// Checks that `value` is an absolute http(s) URL; used by the services' `validate`.
pub fn require_http_url(key: &str, value: &str) -> Result<(), ConfigError> {
    match url::Url::parse(value) {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => Ok(()),
        _ => Err(ConfigError(format!(
            "{key} must be an http(s) URL, got {value:?}"
        ))),
    }
}

/// Checks that `value` parses as a socket address.
pub fn require_socket_addr(key: &str, value: &str) -> Result<(), ConfigError> {
    value
        .parse::<std::net::SocketAddr>()
        .map(|_| ())
        .map_err(|_| ConfigError(format!("{key} must be host:port, got {value:?}")))
}
