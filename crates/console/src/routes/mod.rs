//! The console's routes under `/console/`: the start page, sign-in and sign-out (`signin`), the
//! compiled-in assets (`assets`) and the pages of a signed-in company (`folders`, `dashboard`, `search`, `call`, `apps`, `jobs`), each
//! behind the session extractor (`session::Session`).

pub mod apps;
pub mod assets;
pub mod call;
pub mod dashboard;
pub mod folders;
pub mod jobs;
pub mod search;
pub mod session;
pub mod signin;

use actix_web::web::{self, Data, ServiceConfig};

use crate::state::Console;

/// Mounts the console on `cfg` with its shared state.
pub fn configure(console: Data<Console>) -> impl FnOnce(&mut ServiceConfig) {
    move |cfg| {
        cfg.service(
            web::scope("/console")
                .app_data(console)
                .route("", web::get().to(signin::start))
                .route("/", web::get().to(signin::start))
                .route("/assets/{name}", web::get().to(assets::asset))
                .route("/{company}/signin", web::get().to(signin::signin))
                .route("/{company}/callback", web::get().to(signin::callback))
                .route("/{company}/signout", web::post().to(signin::signout))
                .route("/{company}/signedout", web::get().to(signin::signed_out))
                .route("/{company}/", web::get().to(folders::folders))
                .route("/{company}/search", web::get().to(search::search))
                .route("/{company}/jobs", web::get().to(jobs::jobs))
                .route("/{company}/apps", web::get().to(apps::list))
                .service(
                    web::resource("/{company}/apps/{app}")
                        .app_data(web::FormConfig::default().limit(apps::EDITOR_BYTES))
                        .route(web::get().to(apps::editor))
                        .route(web::post().to(apps::save)),
                )
                .route(
                    "/{company}/apps/{app}/rescoring",
                    web::get().to(apps::progress),
                )
                .service(
                    web::resource("/{company}/phrases")
                        .app_data(web::JsonConfig::default().limit(apps::EDITOR_BYTES))
                        .route(web::post().to(apps::check)),
                )
                .route(
                    "/{company}/calls/{organization}/{call}",
                    web::get().to(call::page),
                )
                .route(
                    "/{company}/calls/{organization}/{call}/metadata",
                    web::post().to(call::metadata),
                )
                .route(
                    "/{company}/calls/{organization}/{call}/audio",
                    web::get().to(call::audio),
                )
                .route(
                    "/{company}/{organization}/{folder}/",
                    web::get().to(dashboard::dashboard),
                ),
        );
    }
}
