//! The ingestion API's routes: sending events (`track`), reading them back (`events`) and managing the
//! projects they belong to (`projects`).

pub mod events;
pub mod projects;
pub mod track;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Project paths first: `/v3/projects/{key}` would otherwise read as the events of a project whose
    // app key is "projects" (app keys are hex, so no real key collides).
    cfg.route("/v3/projects", web::get().to(projects::list))
        .route("/v3/projects", web::post().to(projects::create))
        .route("/v3/projects/{app_key}", web::get().to(projects::get))
        .route("/v3/projects/{app_key}", web::put().to(projects::replace))
        .route("/v3/projects/{app_key}", web::delete().to(projects::delete))
        .route("/v3/{app_key}/track", web::post().to(track::track_v3))
        .route("/v2/{app_key}/track", web::post().to(track::track_v2))
        .route("/v3/{app_key}/events", web::get().to(events::list));
}
