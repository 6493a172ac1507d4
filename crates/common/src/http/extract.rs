//! Extractor configurations whose rejections answer in the platform's JSON error format.

use actix_web::web;

use crate::{ApiError, ErrorCode};

pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(1 << 20)
        .error_handler(|err, _req| {
            ApiError::new(ErrorCode::BadRequest, format!("invalid JSON body: {err}")).into()
        })
}

pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err, _req| {
        ApiError::new(ErrorCode::BadRequest, format!("invalid query: {err}")).into()
    })
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|err, _req| {
        ApiError::new(ErrorCode::BadRequest, format!("invalid path: {err}")).into()
    })
}

pub fn form_config() -> web::FormConfig {
    web::FormConfig::default()
        .limit(64 * 1024)
        .error_handler(|err, _req| {
            ApiError::new(ErrorCode::BadRequest, format!("invalid form: {err}")).into()
        })
}
