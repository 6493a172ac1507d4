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

    pub fn require(&self, key: &str) -> Result<&str, OAuthError> {
        self.get(key)
            .ok_or_else(|| OAuthError::invalid_request(format!("parameter {key} is required")))
    }
}
