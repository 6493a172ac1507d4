//! The console's stylesheet and scripts, compiled into the binary: nothing is fetched from elsewhere.
//! uPlot (MIT, `assets/vendor/uPlot.LICENSE`) draws the charts.

use actix_web::web::Path;
use actix_web::HttpResponse;

/// The assets by name: content type and bytes.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "console.css",
        "text/css; charset=utf-8",
        include_bytes!("../../assets/console.css"),
    ),
    (
        "console.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/console.js"),
    ),
    (
        "uPlot.iife.min.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/vendor/uPlot.iife.min.js"),
    ),
    (
        "uPlot.min.css",
        "text/css; charset=utf-8",
        include_bytes!("../../assets/vendor/uPlot.min.css"),
    ),
];

pub async fn asset(name: Path<String>) -> HttpResponse {
    match ASSETS.iter().find(|(asset, _, _)| *asset == name.as_str()) {
        Some((_, content_type, bytes)) => HttpResponse::Ok()
            .content_type(*content_type)
            .insert_header(("Cache-Control", "public, max-age=3600"))
            .insert_header(("X-Content-Type-Options", "nosniff"))
            .body(*bytes),
        None => HttpResponse::NotFound().finish(),
    }
}
