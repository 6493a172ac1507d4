//! `/apps/<company>[/<app>]`: a company's applications (docs/analytics-api.md, Applications; docs/scoring.md).
//! `PUT` checks the tree and every phrase (on the matching pool) and stores its normalized JSON with its
//! revision; `DELETE` removes it. Both through `apps::changes`, which publishes the rescore job of the
//! folders using the application in the change's transaction.

use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::body::{json_body, Body};
use crate::access::{Authorized, Read, Write};
use crate::apps::changes;
use crate::error::AnalyticsError;
use crate::routes::paths::AppPath;
use crate::state::AnalyticsState;
use analytics_store::{self as store, AppRow};
use scoring::apps::Definition;
use scoring::names::CompanyName;

type Answer = Result<HttpResponse, AnalyticsError>;

/// A stored application.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppRecord {
    pub name: String,
    /// The first 16 hex digits of the SHA-256 of the normalized definition.
    pub revision: String,
    /// When the application was last changed (UTC, RFC 3339).
    pub updated: String,
    /// The categories as stored: keys sorted, a phrase without speaker as its text.
    #[schema(value_type = Object)]
    pub categories: Value,
}

impl AppRecord {
    pub fn of(row: &AppRow) -> Result<AppRecord, AnalyticsError> {
        let mut definition: Value =
            serde_json::from_str(&row.definition).map_err(AnalyticsError::internal)?;
        Ok(AppRecord {
            name: row.name.clone(),
            revision: row.revision.clone(),
            updated: row.updated.clone(),
            categories: definition["categories"].take(),
        })
    }
}

/// The documented shape of the body of `PUT` (the handler reads it by hand, in
/// `apps::definition::Definition::parse`, to name the path of any problem): `{"categories": {NAME:
/// CATEGORY}}`, a CATEGORY `{"phrases": [PHRASE, ...]}` (a leaf) or `{"subcategories": {NAME: CATEGORY}}`,
/// at most four levels, a PHRASE a string of the phrase language (leading `-`: exclude) or `{"text",
/// "speaker": "agent"|"client"}`. Whether a phrase reads is the phrase language's parser's to say.
pub struct AppBody;

impl utoipa::PartialSchema for AppBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("categories", categories_schema(1))
            .required("categories")
            .additional_properties(Some(AdditionalProperties::<Schema>::FreeForm(false)))
            .into()
    }
}

impl ToSchema for AppBody {}

/// The categories of level `depth` by name: at least one; top-level names are not `/appstats`' own.
fn categories_schema(depth: usize) -> utoipa::openapi::schema::Object {
    use scoring::apps::definition::{MAX_NAME_CHARS, RESERVED_TOP_LEVEL};
    use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
    let mut name = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_NAME_CHARS))
        .pattern(Some(scoring::names::CATEGORY_PATTERN))
        .build();
    if depth == 1 {
        name = common::http::with_keyword(
            name,
            "not",
            serde_json::json!({"enum": RESERVED_TOP_LEVEL}),
        );
    }
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .min_properties(Some(1))
        .additional_properties(Some(AdditionalProperties::RefOr(category_schema(depth))))
        .build();
    object.property_names = Some(Box::new(name.into()));
    object
}

/// A category of level `depth`: a leaf, or (above the deepest level) a parent.
fn category_schema(depth: usize) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use scoring::apps::definition::MAX_DEPTH;
    use utoipa::openapi::schema::{
        AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type,
    };
    let closed = || Some(AdditionalProperties::<Schema>::FreeForm(false));
    let phrase = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some("A phrase of the phrase language (docs/phrases.md)")),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property("text", ObjectBuilder::new().schema_type(Type::String))
                .required("text")
                .property(
                    "speaker",
                    ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                            Type::String,
                            Type::Null,
                        ]))
                        .enum_values(Some([
                            serde_json::json!("agent"),
                            serde_json::json!("client"),
                            serde_json::Value::Null,
                        ])),
                )
                .additional_properties(closed()),
        );
    let leaf = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "phrases",
            ArrayBuilder::new()
                .items(phrase)
                .min_items(Some(1))
                .max_items(Some(scoring::apps::limits::MAX_PHRASES)),
        )
        .required("phrases")
        .additional_properties(closed());
    if depth == MAX_DEPTH {
        return leaf.into();
    }
    let parent = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("subcategories", categories_schema(depth + 1))
        .required("subcategories")
        .additional_properties(closed());
    OneOfBuilder::new().item(leaf).item(parent).into()
}

pub(crate) fn app_not_found(name: &str) -> AnalyticsError {
    AnalyticsError::NotFound(format!("Application not found: {name}"))
}

/// A company's applications.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppList {
    pub company: String,
    /// Their names, in order.
    pub apps: Vec<String>,
}

/// List a company's applications
#[utoipa::path(get, path = "/apps/{company}", tag = "apps",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path)),
    responses((status = 200, body = AppList),
        (status = 404, description = "Folder not found: <company>")))]
pub async fn list_apps(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<CompanyName>,
) -> Answer {
    let company = path.into_inner();
    store::get_company(&state.db, &company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&company))?;
    let apps = store::app_names(&state.db, &company).await?;
    Ok(HttpResponse::Ok().json(AppList {
        company: company.to_string(),
        apps,
    }))
}

/// Read an application
#[utoipa::path(get, path = "/apps/{company}/{app}", tag = "apps",
    security(("bearer" = ["analytics:read"]), ("token" = ["analytics:read"])),
    params(("company" = String, Path), ("app" = String, Path, description = "Application name, URL-encoded")),
    responses((status = 200, body = AppRecord),
        (status = 404, description = "Folder not found: <company>, or Application not found: <app>")))]
pub async fn get_app(
    state: Data<AnalyticsState>,
    _: Authorized<Read>,
    path: Path<AppPath>,
) -> Answer {
    let AppPath { company, app: name } = path.into_inner();
    store::get_company(&state.db, &company)
        .await?
        .ok_or_else(|| AnalyticsError::scope_not_found(&company))?;
    let row = store::get_app(&state.db, &company, &name)
        .await?
        .ok_or_else(|| app_not_found(&name))?;
    Ok(HttpResponse::Ok().json(AppRecord::of(&row)?))
}

/// Create or replace an application
///
/// Every phrase is parsed; the first problem is refused with its path, e.g.
/// `categories.Sales.Upsell.phrases[1]: invalid phrase "premium &": nothing after '&' at position 9`.
/// A change publishes a rescore job for the folders using the application; the same definition sent
/// again changes nothing.
#[utoipa::path(put, path = "/apps/{company}/{app}", tag = "apps",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])), request_body = AppBody,
    params(("company" = String, Path), ("app" = String, Path, description = "Application name, URL-encoded")),
    responses((status = 200, body = AppRecord),
        (status = 400, description = "The path and the problem (text/html)"),
        (status = 404, description = "Folder not found: <company>"),
        (status = 409, description = "The company is being deleted")))]
pub async fn put_app(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<AppPath>,
    body: Body,
) -> Answer {
    let AppPath { company, app: name } = path.into_inner();
    name.check()?;
    // Checking up to 10,000 phrases is CPU work: on the matching pool, in the company's turn.
    let bytes = body.0;
    let (normalized, revision) = state
        .matching
        .run(&company, move || -> Result<_, AnalyticsError> {
            let body: Value = json_body(&bytes, None)?;
            let definition =
                Definition::parse(&body).map_err(|e| AnalyticsError::BadRequest(e.to_string()))?;
            let normalized = definition.normalized();
            let revision = scoring::apps::definition::revision_of(&normalized);
            Ok((normalized, revision))
        })
        .await??;

    let row = changes::save(&state, &company, &name, normalized, revision).await?;
    Ok(HttpResponse::Ok().json(AppRecord::of(&row)?))
}

/// Delete an application
///
/// Answers the application as it was. Folders that name it in `apps` keep the name; their calls are
/// rescored without it.
#[utoipa::path(delete, path = "/apps/{company}/{app}", tag = "apps",
    security(("bearer" = ["analytics:write"]), ("token" = ["analytics:write"])),
    params(("company" = String, Path), ("app" = String, Path, description = "Application name, URL-encoded")),
    responses((status = 200, description = "The application as it was", body = AppRecord),
        (status = 404, description = "Folder not found: <company>, or Application not found: <app>")))]
pub async fn delete_app(
    state: Data<AnalyticsState>,
    _: Authorized<Write>,
    path: Path<AppPath>,
) -> Answer {
    let AppPath { company, app: name } = path.into_inner();
    let row = changes::remove(&state, &company, &name)
        .await?
        .ok_or_else(|| app_not_found(&name))?;
    Ok(HttpResponse::Ok().json(AppRecord::of(&row)?))
}
