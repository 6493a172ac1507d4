//! `/console/<company>/calls/<organization>/<tId>`: a call's page (from `GET /calls` and
//! `/appmatches`, asked at once), its metadata forms (`POST .../metadata`: a `PATCH` or `DELETE` of
//! `/metadata`, then back to the page; a refusal shows the API's message beside what was typed), and
//! its recording (`.../audio`, passed on from the API as it comes, with the browser's `Range`).

use actix_web::body::SizedStream;
use actix_web::http::{header, StatusCode};
use actix_web::web::{Bytes, Form, Path};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::Stream;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::session::Session;
use crate::api::{segment, Api};
use crate::error::ConsoleError;
use crate::pages::call::{self, Call, Refused};
use crate::pages::layout::{self, see_other};

type Page = Result<HttpResponse, ConsoleError>;

#[derive(Deserialize)]
pub struct CallPath {
    #[allow(dead_code)]
    company: String,
    organization: String,
    call: String,
}

impl CallPath {
    /// `<company>/<organization>/<tId>` as the API's paths end.
    fn api_tail(&self, company: &str) -> String {
        format!(
            "{}/{}/{}",
            segment(company),
            segment(&self.organization),
            segment(&self.call)
        )
    }
}

/// A metadata form: `action` is `set` (the field to the value) or `delete` (the field).
#[derive(Deserialize)]
pub struct MetadataForm {
    csrf: String,
    action: String,
    field: String,
    #[serde(default)]
    value: String,
}

/// The call and its applications' scorecard (`None` when nothing matched).
async fn load(
    api: &Api<'_>,
    tail: &str,
) -> Result<(Call, Option<Map<String, Value>>), ConsoleError> {
    let (call, matches) = futures_util::future::join(
        api.get::<Call>(&format!("/calls/{tail}")),
        api.get::<Value>(&format!("/appmatches/{tail}")),
    )
    .await;
    let scorecard = matches?["scorecard"].as_object().cloned();
    Ok((call?, scorecard))
}

fn title(call: &Call) -> String {
    if call.filename.is_empty() {
        format!("Call {}", call.id)
    } else {
        format!("Call {}", call.filename)
    }
}

/// The call's page, with a refused metadata form's reason when there is one.
async fn show(
    session: &Session,
    api: &Api<'_>,
    tail: &str,
    status: StatusCode,
    refused: Option<&Refused<'_>>,
) -> Page {
    let (call, scorecard) = load(api, tail).await?;
    Ok(layout::page(
        status,
        &title(&call),
        Some(&session.signed()),
        call::content(
            &session.row.company,
            &session.row.csrf,
            &call,
            scorecard.as_ref(),
            refused,
        ),
    ))
}

pub async fn page(session: Session, path: Path<CallPath>) -> Page {
    let api = session.api();
    let tail = path.api_tail(&session.row.company);
    show(&session, &api, &tail, StatusCode::OK, None).await
}

pub async fn metadata(session: Session, path: Path<CallPath>, form: Form<MetadataForm>) -> Page {
    session.check_csrf(&form.csrf)?;
    let api = session.api();
    let tail = path.api_tail(&session.row.company);
    let target = format!("/metadata/{tail}");
    let done = match form.action.as_str() {
        "set" => {
            let mut change = Map::new();
            change.insert(form.field.clone(), Value::String(form.value.clone()));
            api.send(Method::PATCH, &target, Some(&Value::Object(change)))
                .await
        }
        "delete" => {
            api.send(Method::DELETE, &target, Some(&json!([form.field])))
                .await
        }
        _ => {
            return Err(ConsoleError::BadRequest(
                "a metadata form sets or deletes a field".into(),
            ))
        }
    };
    match done {
        Ok(_) => {
            let (company, organization, id) = (
                &session.row.company,
                segment(&path.organization),
                segment(&path.call),
            );
            Ok(see_other(&format!(
                "/console/{company}/calls/{organization}/{id}#metadata"
            )))
        }
        Err(ConsoleError::Api {
            status: 400,
            message,
        }) => {
            let refused = Refused {
                field: &form.field,
                value: &form.value,
                message: &message,
            };
            show(
                &session,
                &api,
                &tail,
                StatusCode::BAD_REQUEST,
                Some(&refused),
            )
            .await
        }
        Err(other) => Err(other),
    }
}

/// The headers of the API's answer that the browser needs to play and seek the recording.
const PASSED_ON: [&str; 5] = [
    "content-type",
    "content-range",
    "accept-ranges",
    "content-disposition",
    "x-content-type-options",
];

pub async fn audio(session: Session, path: Path<CallPath>, request: HttpRequest) -> Page {
    let range = request
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok());
    let tail = path.api_tail(&session.row.company);
    let response = session
        .api()
        .stream(&format!("/calls/{tail}/audio"), range)
        .await?;
    let status =
        StatusCode::from_u16(response.status().as_u16()).map_err(ConsoleError::internal)?;
    let mut answer = HttpResponse::build(status);
    for name in PASSED_ON {
        if let Some(value) = response.headers().get(name) {
            let value = header::HeaderValue::from_bytes(value.as_bytes())
                .map_err(ConsoleError::internal)?;
            answer.insert_header((name, value));
        }
    }
    answer.insert_header((header::CACHE_CONTROL, "private, no-store"));
    Ok(match response.content_length() {
        Some(length) => answer.body(SizedStream::new(length, chunks(response))),
        None => answer.streaming(chunks(response)),
    })
}

/// The answer's body as it arrives.
fn chunks(response: reqwest::Response) -> impl Stream<Item = Result<Bytes, reqwest::Error>> {
    futures_util::stream::unfold(Some(response), |state| async move {
        let mut response = state?;
        match response.chunk().await {
            Ok(Some(bytes)) => Some((Ok(bytes), Some(response))),
            Ok(None) => None,
            Err(error) => Some((Err(error), None)),
        }
    })
}
