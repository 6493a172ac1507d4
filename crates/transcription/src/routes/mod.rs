//! Transcription's routes of the analytics API: `/transcribe` (recordings to transcribe, calls added to
//! folders, a request's progress and result), `/jobs/<company>` (its latest requests beside what is being
//! deleted) and `/callbacks/<company>/secret` (the key its callbacks are signed with).

pub mod callback_secret;
pub mod jobs;
pub mod transcribe;

use actix_web::web;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/transcribe/{company}/{organization}/{folder}")
            .route(web::post().to(transcribe::folder::add_call)),
    )
    .service(web::resource("/transcribe").route(web::post().to(transcribe::direct::transcribe)))
    .service(
        web::resource("/transcribe/{requestid}")
            .route(web::get().to(transcribe::progress::progress)),
    )
    .service(
        web::resource("/transcribe/{requestid}/result")
            .route(web::get().to(transcribe::progress::result)),
    )
    .service(web::resource("/jobs/{company}").route(web::get().to(jobs::jobs)))
    .service(
        web::resource("/callbacks/{company}/secret")
            .route(web::get().to(callback_secret::get_secret))
            .route(web::post().to(callback_secret::rotate_secret)),
    );
}
