//! The applications of a company (docs/scoring.md, Applications): one row per application with its
//! normalized definition and revision. Like every store function, these run on the pool or inside the
//! caller's transaction, so a change and the rescore job announcing it commit together.

use common::db::{Handle, StoreError};
use common::dispatch;

use super::rows::AppRow;
use super::sql::Statements;

pub async fn get_app<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
) -> Result<Option<AppRow>, StoreError> {
    dispatch!(h, Statements::get_app(company, name))
}

/// The names of the company's applications, in order.
pub async fn app_names<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
) -> Result<Vec<String>, StoreError> {
    dispatch!(h, Statements::app_names(company))
}

/// Inserts the application, or replaces the one of the same company and name.
pub async fn put_app<'a>(h: impl Into<Handle<'a>>, row: &AppRow) -> Result<(), StoreError> {
    dispatch!(h, Statements::put_app(row))
}

/// Removes the application; whether there was one.
pub async fn delete_app<'a>(
    h: impl Into<Handle<'a>>,
    company: &str,
    name: &str,
) -> Result<bool, StoreError> {
    dispatch!(h, Statements::delete_app(company, name))
}
