//! `GET /console/<company>/<organization>/<folder>/?from=&to=`: the folder's dashboard over a date range
//! (the last 30 days unless given), from `/config` (the folder's applications), `/stats` and one
//! `/appstats` per application: `/stats` beside `/config`, the `/appstats` at once after it; the
//! answers are read and the page laid out off the HTTP worker (`offload`).

use actix_web::http::StatusCode;
use actix_web::web::{Path, Query};
use actix_web::HttpResponse;
use chrono::{Days, NaiveDate, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::session::Session;
use crate::api::segment;
use crate::appstats;
use crate::error::ConsoleError;
use crate::offload;
use crate::pages::dashboard::{self, AppFigures};
use crate::pages::layout;

/// The longest range a dashboard shows, in days: the API's figures are per day.
const MAX_DAYS: u64 = 366;

#[derive(Deserialize)]
pub struct FolderPath {
    #[allow(dead_code)]
    company: String,
    organization: String,
    folder: String,
}

#[derive(Deserialize)]
pub struct RangeQuery {
    from: Option<String>,
    to: Option<String>,
}

#[derive(Deserialize)]
struct FolderRecord {
    apps: Vec<String>,
}

fn date(text: &str, field: &str) -> Result<NaiveDate, ConsoleError> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| ConsoleError::BadRequest(format!("{field}: a date is written YYYY-MM-DD")))
}

/// The range asked for, or the last 30 days.
fn range(query: &RangeQuery, today: NaiveDate) -> Result<(NaiveDate, NaiveDate), ConsoleError> {
    let to = match &query.to {
        Some(to) => date(to, "to")?,
        None => today,
    };
    let from = match &query.from {
        Some(from) => date(from, "from")?,
        None => to.checked_sub_days(Days::new(29)).unwrap_or(to),
    };
    if from > to {
        return Err(ConsoleError::BadRequest(
            "from: the range starts after it ends".into(),
        ));
    }
    if (to - from).num_days() as u64 >= MAX_DAYS {
        return Err(ConsoleError::BadRequest(format!(
            "to: a dashboard shows at most {MAX_DAYS} days"
        )));
    }
    Ok((from, to))
}

pub async fn dashboard(
    session: Session,
    path: Path<FolderPath>,
    query: Query<RangeQuery>,
) -> Result<HttpResponse, ConsoleError> {
    let (from, to) = range(&query, Utc::now().date_naive())?;
    let daterange = format!("{}-{}", from.format("%Y%m%d"), to.format("%Y%m%d"));
    let api = session.api();
    let (company, organization, folder) = (
        segment(&session.row.company),
        segment(&path.organization),
        segment(&path.folder),
    );
    // /stats needs nothing of /config: it is asked beside the folder's record and its applications'
    // /appstats, which follow the record.
    let stats_path = format!("/stats/{company}/{organization}/{folder}?daterange={daterange}");
    let stats = api.get_bytes(&stats_path);
    let apps = async {
        let record: FolderRecord = api
            .get(&format!("/config/{company}/{organization}/{folder}"))
            .await?;
        let apps = record.apps.into_iter().map(|app| {
            let (api, company, organization, folder, daterange) =
                (&api, &company, &organization, &folder, &daterange);
            async move {
                let path = format!(
                    "/appstats/{company}/{organization}/{}/{folder}?daterange={daterange}&depth=0",
                    segment(&app)
                );
                match api.get_bytes(&path).await {
                    Ok(days) => Ok(Some((app, days))),
                    // A folder may name an application that does not exist (any more): it is skipped.
                    Err(ConsoleError::Api { status: 404, .. }) => Ok(None),
                    Err(error) => Err(error),
                }
            }
        });
        let apps = futures_util::future::join_all(apps).await;
        apps.into_iter()
            .collect::<Result<Vec<_>, ConsoleError>>()
            .map(|apps| apps.into_iter().flatten().collect::<Vec<_>>())
    };
    let (stats, apps) = futures_util::future::join(stats, apps).await;
    let (stats, apps) = (stats?, apps?);

    // Reading the answers and laying out the page: off the HTTP worker.
    let (from, to) = (
        from.format("%Y-%m-%d").to_string(),
        to.format("%Y-%m-%d").to_string(),
    );
    let content = offload::run(&session.console.runner, &session.row.company, move || {
        let stats: Vec<Value> = serde_json::from_slice(&stats).map_err(ConsoleError::internal)?;
        let apps = apps
            .iter()
            .map(|(app, days)| Ok(AppFigures::of(app, appstats::read(days)?)))
            .collect::<Result<Vec<_>, serde_json::Error>>()
            .map_err(ConsoleError::internal)?;
        Ok::<_, ConsoleError>(dashboard::content(
            &from,
            &to,
            &dashboard::stats_charts(&stats),
            &apps,
            stats.is_empty(),
        ))
    })
    .await??;
    let title = format!("{} / {}", path.organization, path.folder);
    Ok(layout::page(
        StatusCode::OK,
        &title,
        Some(&session.signed()),
        content,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(from: Option<&str>, to: Option<&str>) -> RangeQuery {
        RangeQuery {
            from: from.map(Into::into),
            to: to.map(Into::into),
        }
    }

    #[test]
    fn the_range_defaults_to_the_last_30_days_and_is_bounded() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        let (from, to) = range(&query(None, None), today).unwrap();
        assert_eq!(
            (from.to_string(), to.to_string()),
            ("2026-11-01".into(), "2026-11-30".into())
        );
        assert!(range(&query(Some("2026-12-01"), Some("2026-11-30")), today).is_err());
        assert!(range(&query(Some("2020-01-01"), Some("2026-11-30")), today).is_err());
        assert!(range(&query(Some("20261101"), None), today).is_err());
    }
}
