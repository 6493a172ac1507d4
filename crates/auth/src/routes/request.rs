//! What several endpoints read from a request: the company of the path, the token reference of
//! introspection and revocation, and the form media type that every body must have.

use std::fmt;
use std::ops::Deref;

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::error::OAuthError;

/// The company every endpoint belongs to.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CompanyPath {
    /// The company's short name.
    company: String,
}

impl Deref for CompanyPath {
    type Target = String;

    fn deref(&self) -> &String {
        &self.company
    }
}

impl fmt::Display for CompanyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.company)
    }
}

/// The form of `POST /oauth/{company}/introspect` and `/revoke`. The client authenticates with HTTP Basic
/// or, instead (one method, not both), with `client_id` and `client_secret` in this form, as at the token
/// endpoint (`clientId` and `clientSecret` are taken too, one spelling per field).
#[derive(Deserialize, ToSchema)]
pub struct TokenReferenceForm {
    #[schema(min_length = 1)]
    pub(super) token: String,
    /// `access_token` or `refresh_token`: where to look first. The token is found whatever the value,
    /// and an unknown one is ignored (RFC 7009, section 2.1).
    #[schema(example = "refresh_token")]
    pub(super) token_type_hint: Option<String>,
}

/// Requests to the OAuth endpoints that carry a body must be form-encoded.
pub(super) fn require_form(req: &actix_web::HttpRequest) -> Result<(), OAuthError> {
    let is_form = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_form_media_type);
    if is_form {
        Ok(())
    } else {
        Err(OAuthError::invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ))
    }
}

/// Whether a Content-Type names the form media type: the type before any `;` (parameters such as
/// `charset` are allowed) is `application/x-www-form-urlencoded`, compared whole and case-insensitively,
/// not as a prefix.
fn is_form_media_type(content_type: &str) -> bool {
    let media_type = content_type.split(';').next().unwrap_or_default();
    media_type
        .trim_matches([' ', '\t'])
        .eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

#[cfg(test)]
mod tests {
    use super::is_form_media_type;

    #[test]
    fn the_form_media_type_is_compared_whole() {
        for yes in [
            "application/x-www-form-urlencoded",
            "Application/X-WWW-Form-URLEncoded",
            "application/x-www-form-urlencoded; charset=UTF-8",
            "application/x-www-form-urlencoded;charset=utf-8",
            " application/x-www-form-urlencoded ; charset=utf-8",
        ] {
            assert!(is_form_media_type(yes), "{yes:?}");
        }
        for no in [
            "application/x-www-form-urlencodedXYZ",
            "application/x-www-form-urlencoded-evil; charset=utf-8",
            "application/x-www-form-urlencoded/json",
            "application/x-www-form",
            "application/json",
            "multipart/form-data",
            "",
        ] {
            assert!(!is_form_media_type(no), "{no:?}");
        }
    }
}
