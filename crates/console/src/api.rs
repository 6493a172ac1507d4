//! The analytics API as the console's server side calls it: with the signed-in user's access token, so
//! every page shows what that token may see and nothing else. The API's error messages come back as its
//! status and text (docs/analytics-api.md, Errors); a 401 means the token no longer works, and the page
//! asks its user to sign in again.

use actix_web::web::Bytes;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ConsoleError;
use crate::state::Console;

/// What a path segment keeps as it is: RFC 3986's unreserved characters but `.`, so that no name
/// can read as a `.` or `..` segment once encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'~');

/// `name` as one path segment.
pub fn segment(name: &str) -> String {
    utf8_percent_encode(name, SEGMENT).to_string()
}

/// Whether one of the path's segments is `.` or `..`, which URL parsers resolve (`%2E` included):
/// a name made of dots must not lead the request to another resource.
fn has_dot_segment(path: &str) -> bool {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    path.split('/').any(|part| {
        let part = part.to_ascii_lowercase().replace("%2e", ".");
        part == "." || part == ".."
    })
}

/// The API on behalf of one signed-in user.
pub struct Api<'a> {
    console: &'a Console,
    token: String,
    /// Where a refused token sends the user back to after signing in again.
    company: String,
    back_to: String,
}

impl<'a> Api<'a> {
    pub fn new(console: &'a Console, token: String, company: &str, back_to: &str) -> Api<'a> {
        Api {
            console,
            token,
            company: company.to_string(),
            back_to: back_to.to_string(),
        }
    }

    /// `GET <path>` (segments already encoded, query included), its JSON answer.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ConsoleError> {
        let body = self.call(Method::GET, path, None).await?;
        serde_json::from_slice(&body).map_err(ConsoleError::internal)
    }

    /// `GET <path>`, its answer's bytes, for a caller that reads them off the HTTP worker.
    pub async fn get_bytes(&self, path: &str) -> Result<Bytes, ConsoleError> {
        self.call(Method::GET, path, None).await
    }

    /// `method <path>` with a JSON body, the JSON answer.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ConsoleError> {
        let answer = self.call(method, path, body).await?;
        serde_json::from_slice(&answer).map_err(ConsoleError::internal)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Bytes, ConsoleError> {
        let response = self.request(method, path, body, None).await?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(ConsoleError::internal)?;
        if !status.is_success() {
            return Err(ConsoleError::Api {
                status: status.as_u16(),
                message: unescape(&String::from_utf8_lossy(&bytes)),
            });
        }
        Ok(bytes)
    }

    /// `GET <path>` with the `Range` header given, the API's answer as it came when it is a success (a
    /// recording, passed on to the browser without being read whole here).
    pub async fn stream(
        &self,
        path: &str,
        range: Option<&str>,
    ) -> Result<reqwest::Response, ConsoleError> {
        let response = self.request(Method::GET, path, None, range).await?;
        let status = response.status();
        if status.is_success() || status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
            return Ok(response);
        }
        let bytes = response.bytes().await.map_err(ConsoleError::internal)?;
        Err(ConsoleError::Api {
            status: status.as_u16(),
            message: unescape(&String::from_utf8_lossy(&bytes)),
        })
    }

    /// Sends the request; a 401 means the token no longer works: sign in again.
    async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        range: Option<&str>,
    ) -> Result<reqwest::Response, ConsoleError> {
        if has_dot_segment(path) {
            return Err(ConsoleError::BadRequest(
                "a name of only dots is not one the API has".into(),
            ));
        }
        let url = format!(
            "{}{path}",
            self.console.settings.api_url.trim_end_matches('/')
        );
        let mut request = self
            .console
            .http
            .request(method, url)
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(range) = range {
            request = request.header(reqwest::header::RANGE, range);
        }
        let response = request.send().await.map_err(ConsoleError::internal)?;
        if response.status() == reqwest::StatusCode::UNAUTHORIZED {
            return Err(ConsoleError::SignIn {
                company: self.company.clone(),
                back_to: self.back_to.clone(),
            });
        }
        Ok(response)
    }
}

/// The text of an error message the API escaped for HTML (the pages escape it again as they show it).
pub fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_segment_each() {
        assert_eq!(segment("Sales Q4/2"), "Sales%20Q4%2F2");
        assert_eq!(segment("a-b_c.d~"), "a-b_c%2Ed~");
        assert_eq!(segment(".."), "%2E%2E");
    }

    #[test]
    fn dot_segments_are_caught_however_written() {
        for path in [
            "/stats/acme/%2E%2E/x",
            "/stats/acme/%2e/x",
            "/stats/acme/..",
            "/a/./b?x=1",
        ] {
            assert!(has_dot_segment(path), "{path}");
        }
        assert!(!has_dot_segment("/stats/acme/a.b/x?daterange=1..2"));
    }

    #[test]
    fn escaped_messages_read_as_sent() {
        assert_eq!(
            unescape("invalid phrase &quot;a &amp;&quot; &lt;b&gt;"),
            "invalid phrase \"a &\" <b>"
        );
        assert_eq!(unescape("&amp;lt;"), "&lt;");
    }
}
