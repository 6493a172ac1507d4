//! The core's routes of the analytics API: one module per resource (docs/analytics-api.md); the
//! transcription crate serves `/transcribe`, `/jobs` and `/callbacks` beside them. Each handler checks
//! the token against the path's company first (`access`), then reads its body.

pub mod appmatches;
pub mod apps;
pub mod appstats;
pub mod body;
pub mod calls;
pub mod config;
pub mod metadata;
pub mod paths;
pub mod phrases;
pub mod rescoring;
pub mod search;
pub mod stats;

use actix_web::web;

use body::MAX_JSON_BYTES;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PayloadConfig::new(MAX_JSON_BYTES))
        .service(
            web::resource("/config/{company}")
                .route(web::get().to(config::get_company))
                .route(web::post().to(config::create_company))
                .route(web::put().to(config::replace_company))
                .route(web::delete().to(config::delete_company)),
        )
        .service(
            web::resource("/config/{company}/{organization}")
                .route(web::get().to(config::get_organization))
                .route(web::post().to(config::create_organization))
                .route(web::put().to(config::replace_organization))
                .route(web::delete().to(config::delete_organization)),
        )
        .service(
            web::resource("/config/{company}/{organization}/{folder}")
                .route(web::get().to(config::get_folder))
                .route(web::post().to(config::create_folder))
                .route(web::put().to(config::replace_folder))
                .route(web::delete().to(config::delete_folder)),
        )
        .service(
            web::resource("/metadata/{company}/{organization}/{call}")
                .route(web::patch().to(metadata::patch))
                .route(web::delete().to(metadata::delete)),
        )
        .service(
            web::resource("/calls/{company}/{organization}/{call}")
                .route(web::get().to(calls::call)),
        )
        .service(
            web::resource("/calls/{company}/{organization}/{call}/audio")
                .route(web::get().to(calls::audio::audio)),
        )
        .service(web::resource("/apps/{company}").route(web::get().to(apps::list_apps)))
        .service(
            web::resource("/apps/{company}/{app}/rescoring")
                .route(web::get().to(rescoring::rescoring)),
        )
        .service(web::resource("/phrases/{company}").route(web::post().to(phrases::check)))
        .service(
            web::resource("/apps/{company}/{app}")
                .route(web::get().to(apps::get_app))
                .route(web::put().to(apps::put_app))
                .route(web::delete().to(apps::delete_app)),
        )
        .service(
            web::resource("/appmatches/{company}/{organization}/{call}")
                .route(web::get().to(appmatches::app_matches)),
        )
        .service(
            web::resource("/search/{company}/{organization}").route(web::get().to(search::search)),
        )
        .service(
            web::resource("/search/{company}/{organization}/{folder}")
                .route(web::get().to(search::search_folder)),
        )
        .service(
            web::resource("/appstats/{company}/{organization}/{app}")
                .route(web::get().to(appstats::appstats)),
        )
        .service(
            web::resource("/appstats/{company}/{organization}/{app}/{folder}")
                .route(web::get().to(appstats::appstats_folder)),
        )
        .service(
            web::resource("/stats/{company}/{organization}").route(web::get().to(stats::stats)),
        )
        .service(
            web::resource("/stats/{company}/{organization}/{folder}")
                .route(web::get().to(stats::stats_folder)),
        );
}
