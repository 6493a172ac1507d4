//! `GET /search/<company>/<organization>[/<folder>]`: full-text search over the calls' transcript text and
//! their folders' configured metadata fields (docs/analytics-api.md, Search). `q` holds the words (all
//! must match), each `filter=<field>:<value>` requires a configured field to equal a value, `limit` (at
//! most 100, default 20) and `offset` page through the hits.

use std::collections::BTreeMap;

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use common::search::{Scope, SearchQuery, MAX_LIMIT};
use serde::Serialize;
use utoipa::ToSchema;

use crate::access::{Authorized, Read};
use crate::error::AnalyticsError;
use crate::routes::paths::{FolderPath, OrganizationPath};
use crate::state::AnalyticsState;
use analytics_store as store;
use scoring::names::{check_field, CompanyName, FolderName, OrgName};

pub const DEFAULT_LIMIT: usize = 20;
/// The longest `q`.
pub const MAX_QUERY_LEN: usize = 1000;

#[derive(Debug, Serialize, ToSchema)]
pub struct Hit {
    #[serde(rename = "tId")]
    pub t_id: String,
    pub folder: String,
    pub datetime: String,
    /// A passage of the text around the match, the matched words in `<em>`…`</em>`.
    pub snippet: String,
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Hits {
    pub total: u64,
    pub offset: usize,
    pub limit: usize,
    pub hits: Vec<Hit>,
}

/// The query parameters, each at most once except `filter`.
fn parse_query(req: &HttpRequest, scope: Scope) -> Result<SearchQuery, AnalyticsError> {
    let mut query = SearchQuery {
        scope,
        q: String::new(),
        filter: Vec::new(),
        offset: 0,
        limit: DEFAULT_LIMIT,
    };
    let mut seen = Vec::new();
    for (name, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        if name != "filter" {
            if seen.contains(&name) {
                return Err(AnalyticsError::BadRequest(format!("{name} is given twice")));
            }
            seen.push(name.clone());
        }
        let number = |what: &str| {
            value.parse::<usize>().map_err(|_| {
                AnalyticsError::BadRequest(format!("{what} must be a whole number, got {value:?}"))
            })
        };
        match name.as_ref() {
            "token" => {}
            "q" => {
                if value.chars().count() > MAX_QUERY_LEN {
                    return Err(AnalyticsError::BadRequest(format!(
                        "q is longer than {MAX_QUERY_LEN} characters"
                    )));
                }
                query.q = value.into_owned();
            }
            "filter" => query.filter.push(parse_filter(&value)?),
            "limit" => {
                query.limit = number("limit")?;
                if !(1..=MAX_LIMIT).contains(&query.limit) {
                    return Err(AnalyticsError::BadRequest(format!(
                        "limit must be 1 to {MAX_LIMIT}"
                    )));
                }
            }
            "offset" => query.offset = number("offset")?,
            other => {
                return Err(AnalyticsError::BadRequest(format!(
                    "unknown query parameter {other}: expected token, q, filter, limit, offset"
                )))
            }
        }
    }
    Ok(query)
}

/// `<field>:<value>`: the first `:` ends the field.
fn parse_filter(text: &str) -> Result<(String, String), AnalyticsError> {
    let (field, wanted) = text.split_once(':').ok_or_else(|| {
        AnalyticsError::BadRequest(format!("filter must be <field>:<value>, got {text:?}"))
    })?;
    check_field(field)?;
    Ok((field.to_string(), wanted.to_string()))
}

async fn run(
    state: &AnalyticsState,
    req: &HttpRequest,
    company: CompanyName,
    organization: OrgName,
    folder: Option<FolderName>,
) -> Result<HttpResponse, AnalyticsError> {
    match &folder {
        Some(folder) => {
            store::get_folder(&state.db, &company, &organization, folder)
                .await?
                .ok_or_else(|| AnalyticsError::scope_not_found(folder))?;
        }
        None => {
            store::get_organization(&state.db, &company, &organization)
                .await?
                .ok_or_else(|| AnalyticsError::scope_not_found(&organization))?;
        }
    }
    let query = parse_query(
        req,
        Scope {
            company: company.into(),
            organization: Some(organization.into()),
            folder: folder.map(String::from),
        },
    )?;
    let page = state.search.search(&query).await?;
    Ok(HttpResponse::Ok().json(Hits {
        total: page.total,
        offset: query.offset,
        limit: query.limit,
        hits: page
            .hits
            .into_iter()
            .map(|h| Hit {
                t_id: h.id,
                folder: h.folder,
                datetime: h.datetime,
                snippet: h.snippet,
                metadata: h.fields,
            })
            .collect(),
    }))
}

/// The documented shape of a `filter` parameter: a field name a `PATCH` may set (the first `:` ends it)
/// and any value.
pub struct Filter;

impl utoipa::PartialSchema for Filter {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use scoring::names::{reserved_fields_pattern, FIELD_PATTERN, MAX_FIELD_LEN};
        let field = FIELD_PATTERN
            .strip_suffix('$')
            .expect("an anchored pattern");
        let reserved = reserved_fields_pattern();
        let reserved = reserved.strip_suffix('$').expect("an anchored pattern");
        let object = utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .pattern(Some(format!(r"{field}:[\s\S]*$")))
            .examples(["queue:billing"])
            .build();
        common::http::with_keyword(
            object,
            "not",
            serde_json::json!({"anyOf": [
                {"pattern": format!("{reserved}:")},
                {"pattern": format!("^[^:]{{{}}}", MAX_FIELD_LEN + 1)},
            ]}),
        )
        .into()
    }
}

impl ToSchema for Filter {}

/// Search an organization's calls
#[utoipa::path(get, path = "/search/{company}/{organization}", tag = "search",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path),
        ("q" = Option<String>, Query, description = "Words to find (all of them)"),
        ("filter" = Option<Vec<Filter>>, Query, description = "<field>:<value>, repeatable"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 100, description = "Hits per page, 1 to 100"),
        ("offset" = Option<usize>, Query)),
    responses((status = 200, body = Hits)))]
pub async fn search(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<OrganizationPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let OrganizationPath {
        company,
        organization,
    } = path.into_inner();
    run(&state, &req, company, organization, None).await
}

/// Search a folder's calls
#[utoipa::path(get, path = "/search/{company}/{organization}/{folder}", tag = "search",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("organization" = String, Path), ("folder" = String, Path),
        ("q" = Option<String>, Query, description = "Words to find (all of them)"),
        ("filter" = Option<Vec<Filter>>, Query, description = "<field>:<value>, repeatable"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 100, description = "Hits per page, 1 to 100"),
        ("offset" = Option<usize>, Query)),
    responses((status = 200, body = Hits)))]
pub async fn search_folder(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    req: HttpRequest,
    path: Path<FolderPath>,
) -> Result<HttpResponse, AnalyticsError> {
    let FolderPath {
        company,
        organization,
        folder,
    } = path.into_inner();
    run(&state, &req, company, organization, Some(folder)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented filter (its pattern, and none of the patterns of its `not`) is what the search
    /// reads, on filters at the edges of the field's rules.
    #[test]
    fn the_documented_filter_is_what_is_read() {
        let schema = serde_json::to_value(<Filter as utoipa::PartialSchema>::schema()).unwrap();
        let pattern = regex::Regex::new(schema["pattern"].as_str().unwrap()).unwrap();
        let refused: Vec<regex::Regex> = schema["not"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| regex::Regex::new(p["pattern"].as_str().unwrap()).unwrap())
            .collect();
        let long = "x".repeat(64);
        let too_long = "x".repeat(65);
        for text in [
            "queue:billing",
            "queue:",
            "queue:a:b",
            "queue:line\nbreak",
            "customer id:7",
            "Größe:L",
            ":billing",
            "queue",
            "",
            " queue:x",
            "queue :x",
            "a..b:x",
            "a.b:x",
            "tId:x",
            "TID:x",
            "tidy:x",
            "metadata:x",
            "a/b:x",
            &format!("{long}:x"),
            &format!("{too_long}:x"),
        ] {
            let documented = pattern.is_match(text) && !refused.iter().any(|r| r.is_match(text));
            assert_eq!(documented, parse_filter(text).is_ok(), "{text:?}");
        }
    }
}
