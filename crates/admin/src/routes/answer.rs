//! The successful answers that carry a record's version: its ETag, and where a new one lives.

use actix_web::HttpResponse;

use crate::precondition::etag;

/// 200 with the record and its ETag.
pub(crate) fn ok_with_etag(version: i64, body: impl serde::Serialize) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("ETag", etag(version)))
        .json(body)
}

/// 201 with the new record, its ETag and Location.
pub(crate) fn created(location: &str, version: i64, body: impl serde::Serialize) -> HttpResponse {
    HttpResponse::Created()
        .insert_header(("Location", location.to_string()))
        .insert_header(("ETag", etag(version)))
        .json(body)
}
