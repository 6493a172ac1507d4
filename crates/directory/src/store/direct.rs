//! The directory's hot reads answered on the calling thread on SQLite (`common::db::SqliteReaders`), with
//! the very statements the pool runs (those of `sql.rs`). Placeholders `$1`, `$2`, ... are SQLite
//! parameter names, bound here by name.

use common::db::{Probe, ProbeArgument};
use rusqlite::{Connection, OptionalExtension, ToSql};

use super::rows::{UserPermissionsRow, UserRow};
use super::sql::{get_user_sql, user_with_permissions_sql};
use crate::model::{User, UserAccess};

pub(super) fn get_user(
    c: &Connection,
    company: &str,
    username: &str,
) -> rusqlite::Result<Option<User>> {
    let params: &[(&str, &dyn ToSql)] = &[("$1", &company), ("$2", &username)];
    let row = c
        .prepare_cached(get_user_sql())?
        .query_row(params, UserRow::from_sqlite)
        .optional()?;
    Ok(row.map(User::from))
}

pub(super) fn get_user_with_permissions(
    c: &Connection,
    company: &str,
    id: &str,
    probe: Option<&Probe<'_>>,
) -> rusqlite::Result<Option<UserAccess>> {
    let arguments = probe.map_or(&[][..], |p| &p.arguments);
    let names: Vec<String> = (0..arguments.len())
        .map(|i| format!("${}", 3 + i))
        .collect();
    let mut params: Vec<(&str, &dyn ToSql)> = vec![("$1", &company), ("$2", &id)];
    for (name, argument) in names.iter().zip(arguments) {
        let value: &dyn ToSql = match argument {
            ProbeArgument::Text(text) => text,
            ProbeArgument::Integer(number) => number,
        };
        params.push((name, value));
    }
    let rows = c
        .prepare_cached(&user_with_permissions_sql(probe))?
        .query_map(params.as_slice(), UserPermissionsRow::from_sqlite)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(UserPermissionsRow::fold(rows))
}
