//! Parsing of OAuth request parameters (form bodies and query strings). RFC 6749 section 3.1: parameters
//! sent without a value are treated as omitted, and a parameter must not be repeated.

use std::collections::HashMap;

use crate::error::OAuthError;

#[derive(Debug, Default, Clone)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn parse(encoded: &[u8]) -> Result<Params, OAuthError> {
        let mut map = HashMap::new();
        for (key, value) in url::form_urlencoded::parse(encoded) {
            if value.is_empty() {
                continue;
            }
            if map.insert(key.to_string(), value.to_string()).is_some() {
                return Err(OAuthError::invalid_request(format!(
                    "parameter {key} is repeated"
                )));
            }
        }
        Ok(Params(map))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A parameter that has a second spelling (`alias`); a request that sends both is refused rather
    /// than one being picked silently.
    pub fn get_either(&self, key: &str, alias: &str) -> Result<Option<&str>, OAuthError> {
        match (self.get(key), self.get(alias)) {
            (Some(_), Some(_)) => Err(OAuthError::invalid_request(format!(
                "send {key} or {alias}, not both"
            ))),
            (value, None) | (None, value) => Ok(value),
        }
    }

    pub fn require(&self, key: &str) -> Result<&str, OAuthError> {
        self.get(key)
            .ok_or_else(|| OAuthError::invalid_request(format!("parameter {key} is required")))
    }
}
