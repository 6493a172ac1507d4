//! `POST /phrases/<company>`: whether phrases read, by the parser an application's `PUT` uses
//! (docs/analytics-api.md, Checking phrases), for an editor that shows a phrase's problem as it is
//! typed. Nothing is stored; the parsing runs on the matching pool in the company's turn.

use actix_web::web::Data;
use actix_web::HttpResponse;
use serde::Serialize;
use utoipa::ToSchema;

use super::body::{json_body, Body};
use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::state::AnalyticsState;
use scoring::apps::limits::MAX_PHRASES;

/// Why a phrase does not read.
#[derive(Debug, Serialize, ToSchema)]
pub struct PhraseProblem {
    /// As an application's `PUT` says it, e.g. `invalid phrase "refund &": nothing after '&' at
    /// position 8`.
    pub message: String,
    /// What is wrong, without the phrase and the position.
    pub reason: String,
    /// The 0-based position of the problem, in characters.
    pub position: usize,
}

/// Check phrases
///
/// The body is a JSON array of phrases (at most 10,000), as an application's leaves hold them (a
/// leading `-` for an exclude phrase). The answer has one entry per phrase, in order: `null` when it
/// reads, else its problem.
#[utoipa::path(post, path = "/phrases/{company}", tag = "apps",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path)),
    request_body(content = Vec<String>, description = "The phrases",
        example = json!(["thank* for calling", "refund &"])),
    responses((status = 200, description = "One entry per phrase: null, or its problem",
            body = Vec<Option<PhraseProblem>>,
            example = json!([null, {"message": "invalid phrase \"refund &\": nothing after '&' at position 8",
                "reason": "nothing after '&'", "position": 8}])),
        (status = 400, description = "A body that is not an array of at most 10,000 strings (text/html)")))]
pub async fn check(
    state: Data<AnalyticsState>,
    access: Authorized<Read>,
    body: Body,
) -> Result<HttpResponse, AnalyticsError> {
    let company = access.access.claims.company.clone();
    let bytes = body.0;
    let problems = state
        .matching
        .run(&company, move || -> Result<_, AnalyticsError> {
            let phrases: Vec<String> = json_body(&bytes, None)?;
            if phrases.len() > MAX_PHRASES {
                return Err(AnalyticsError::BadRequest(format!(
                    "at most {MAX_PHRASES} phrases are checked at once"
                )));
            }
            Ok(phrases.iter().map(|text| problem(text)).collect::<Vec<_>>())
        })
        .await??;
    Ok(HttpResponse::Ok().json(problems))
}

fn problem(text: &str) -> Option<PhraseProblem> {
    phrases::Phrase::parse(text).err().map(|e| PhraseProblem {
        message: e.to_string(),
        reason: e.reason().to_string(),
        position: e.position(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_reads_or_says_where_it_does_not() {
        assert!(problem("thank* for calling").is_none());
        assert!(problem("-no premium").is_none());
        let wrong = problem("refund &").unwrap();
        assert_eq!(wrong.position, 8);
        assert_eq!(
            wrong.message,
            format!(
                "invalid phrase \"refund &\": {} at position 8",
                wrong.reason
            )
        );
    }
}
