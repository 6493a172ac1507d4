//! `/console/<company>/apps[/<app>]`: the company's applications (`GET /apps`), an application's
//! editor (`GET` and `PUT /apps/<company>/<app>`; a refused save shows the API's message over what was
//! typed, a saved one the rescoring it started), and the two JSON calls of the editor's script: the
//! phrase check as one types (`POST .../phrases`, `POST /phrases`) and the rescoring progress
//! (`GET .../rescoring`). The script's calls carry the session's CSRF token in a header.

use actix_web::http::{header, StatusCode};
use actix_web::web::{Form, Json, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::session::Session;
use crate::api::segment;
use crate::error::ConsoleError;
use crate::pages::apps::{self, Leaf, Rescoring};
use crate::pages::layout::{self, see_other};

type Page = Result<HttpResponse, ConsoleError>;

/// The header the editor's script sends the session's CSRF token in.
const CSRF_HEADER: &str = "x-csrf-token";

/// The largest editor form, and phrase check, taken: the API's own limit on a body.
pub const EDITOR_BYTES: usize = 1024 * 1024;

/// The most phrases the script may have checked at once (the API's own limit).
const MAX_CHECKED: usize = 10_000;

#[derive(Deserialize)]
pub struct AppPath {
    #[allow(dead_code)]
    company: String,
    app: String,
}

#[derive(Deserialize)]
pub struct ListQuery {
    name: Option<String>,
}

#[derive(Deserialize)]
struct AppList {
    apps: Vec<String>,
}

#[derive(Deserialize)]
pub struct SavedQuery {
    #[serde(default)]
    saved: bool,
}

/// `GET /console/<company>/apps[?name=]`: the list, or with a name its editor.
pub async fn list(session: Session, query: Query<ListQuery>) -> Page {
    let company = &session.row.company;
    if let Some(name) = query
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        return Ok(see_other(&format!(
            "/console/{company}/apps/{}",
            segment(name)
        )));
    }
    let listed: AppList = session
        .api()
        .get(&format!("/apps/{}", segment(company)))
        .await?;
    Ok(layout::page(
        StatusCode::OK,
        "Applications",
        Some(&session.signed()),
        apps::list(company, &listed.apps),
    ))
}

fn api_path(company: &str, app: &str) -> String {
    format!("/apps/{}/{}", segment(company), segment(app))
}

/// The rescoring of the application's folders, as the API counts it.
async fn rescoring(session: &Session, app: &str) -> Result<Value, ConsoleError> {
    session
        .api()
        .get(&format!(
            "{}/rescoring",
            api_path(&session.row.company, app)
        ))
        .await
}

/// `GET /console/<company>/apps/<app>[?saved=1]`: the editor (empty for a new application); after a
/// save, with the rescoring it started.
pub async fn editor(session: Session, path: Path<AppPath>, query: Query<SavedQuery>) -> Page {
    let company = &session.row.company;
    let leaves = match session
        .api()
        .get::<Value>(&api_path(company, &path.app))
        .await
    {
        Ok(app) => apps::leaves(app["categories"].as_object().unwrap_or(&Map::new())),
        Err(ConsoleError::Api { status: 404, .. }) => Vec::new(),
        Err(other) => return Err(other),
    };
    let progress = if query.saved {
        let body = rescoring(&session, &path.app).await?;
        Some(Rescoring {
            calls: body["calls"].as_i64().unwrap_or_default(),
            scored: body["scored"].as_i64().unwrap_or_default(),
        })
    } else {
        None
    };
    Ok(editor_page(
        &session,
        StatusCode::OK,
        &path.app,
        &leaves,
        None,
        progress.as_ref(),
    ))
}

/// The editor of `app` holding `leaves`, with the API's refusal of a save or the rescoring after one.
fn editor_page(
    session: &Session,
    status: StatusCode,
    app: &str,
    leaves: &[Leaf],
    refused: Option<&str>,
    progress: Option<&Rescoring>,
) -> HttpResponse {
    layout::page(
        status,
        app,
        Some(&session.signed()),
        apps::editor(
            &session.row.company,
            app,
            &session.row.csrf,
            leaves,
            refused,
            progress,
        ),
    )
}

/// The editor's form: the CSRF token, then `path` and `phrases` for each category, in order.
fn read_form(fields: Vec<(String, String)>) -> (String, Vec<Leaf>) {
    let mut csrf = String::new();
    let mut leaves: Vec<Leaf> = Vec::new();
    for (name, value) in fields {
        match name.as_str() {
            "csrf" => csrf = value,
            "path" => leaves.push(Leaf {
                path: value.trim().to_string(),
                phrases: String::new(),
            }),
            "phrases" => match leaves.last_mut() {
                Some(leaf) if leaf.phrases.is_empty() => leaf.phrases = value.replace("\r\n", "\n"),
                _ => leaves.push(Leaf {
                    path: String::new(),
                    phrases: value.replace("\r\n", "\n"),
                }),
            },
            _ => {}
        }
    }
    (csrf, leaves)
}

/// `POST /console/<company>/apps/<app>`: saves the application; back to the editor with its rescoring,
/// or the editor again with the API's refusal over what was typed.
pub async fn save(
    session: Session,
    path: Path<AppPath>,
    form: Form<Vec<(String, String)>>,
) -> Page {
    let (csrf, leaves) = read_form(form.into_inner());
    session.check_csrf(&csrf)?;
    let company = &session.row.company;
    let body = apps::definition(&leaves);
    match session
        .api()
        .send(Method::PUT, &api_path(company, &path.app), Some(&body))
        .await
    {
        Ok(_) => Ok(see_other(&format!(
            "/console/{company}/apps/{}?saved=true",
            segment(&path.app)
        ))),
        Err(ConsoleError::Api {
            status: 400,
            message,
        }) => {
            let kept: Vec<Leaf> = leaves
                .into_iter()
                .filter(|l| !l.path.is_empty() || !l.phrases.trim().is_empty())
                .collect();
            Ok(editor_page(
                &session,
                StatusCode::BAD_REQUEST,
                &path.app,
                &kept,
                Some(&message),
                None,
            ))
        }
        Err(other) => Err(other),
    }
}

/// Refuses a script's call without the session's CSRF token in its header.
fn check_script(session: &Session, request: &HttpRequest) -> Result<(), ConsoleError> {
    let sent = request
        .headers()
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    session.check_csrf(sent)
}

/// `POST /console/<company>/phrases`: the editor's lines (speakers written in front) checked by the
/// API, one answer per line.
pub async fn check(session: Session, request: HttpRequest, lines: Json<Vec<String>>) -> Page {
    check_script(&session, &request)?;
    if lines.len() > MAX_CHECKED {
        return Err(ConsoleError::BadRequest(format!(
            "at most {MAX_CHECKED} phrases are checked at once"
        )));
    }
    let texts: Vec<Value> = lines
        .iter()
        .map(|line| Value::String(apps::phrase_text(line)))
        .collect();
    let answers = session
        .api()
        .send(
            Method::POST,
            &format!("/phrases/{}", segment(&session.row.company)),
            Some(&Value::Array(texts)),
        )
        .await?;
    Ok(json_answer(&answers))
}

/// `GET /console/<company>/apps/<app>/rescoring`: the API's progress, for the editor's script.
pub async fn progress(session: Session, request: HttpRequest, path: Path<AppPath>) -> Page {
    check_script(&session, &request)?;
    let body = rescoring(&session, &path.app).await?;
    Ok(json_answer(&body))
}

fn json_answer(body: &Value) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(fields: &[(&str, &str)]) -> Vec<(String, String)> {
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_form_pairs_each_path_with_its_phrases() {
        let (csrf, leaves) = read_form(pairs(&[
            ("csrf", "tok"),
            ("path", " Sales.Upsell "),
            ("phrases", "premium\r\n-no premium"),
            ("path", ""),
            ("phrases", ""),
        ]));
        assert_eq!(csrf, "tok");
        assert_eq!(
            leaves,
            vec![
                Leaf {
                    path: "Sales.Upsell".into(),
                    phrases: "premium\n-no premium".into()
                },
                Leaf::default()
            ]
        );
    }
}
