//! A setting that must never be printed (a key, a password, a URL with credentials): configurations derive
//! `Debug`, and one printed while a service starts or fails must not carry its secrets into a log.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A configuration value shown as `***` by `Debug`; read it with [`Confidential::expose`].
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Confidential(String);

impl Confidential {
    /// The value itself, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Confidential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<String> for Confidential {
    fn from(value: String) -> Self {
        Confidential(value)
    }
}

impl From<&str> for Confidential {
    fn from(value: &str) -> Self {
        Confidential(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value_and_serde_keeps_it() {
        let secret = Confidential::from("s3cr3t-value");
        assert_eq!(format!("{secret:?}"), "***");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(***)");
        assert_eq!(secret.expose(), "s3cr3t-value");
        let json = serde_json::to_string(&secret).unwrap();
        assert_eq!(json, "\"s3cr3t-value\"");
        let back: Confidential = serde_json::from_str(&json).unwrap();
        assert_eq!(back, secret);
    }
}
