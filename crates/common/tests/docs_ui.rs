//! Every service serves a docs UI at `/docs/` from its own binary: the page, its scripts and styles come
//! from the service (nothing from another host), and it reads the service's `/openapi.json`.

use actix_web::{web, HttpResponse};
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::testing::loopback_listener;

#[tokio::test]
async fn the_docs_ui_is_served_whole_by_the_service() {
    let (listener, url) = loopback_listener();
    let spec = ServerSpec {
        name: "docs-test",
        openapi: utoipa::openapi::OpenApiBuilder::new()
            .info(utoipa::openapi::Info::new("docs-test", "1"))
            .build(),
        readiness: Readiness::new(|| async { vec![] }),
        metrics: HttpMetrics::new("docs-test"),
        workers: 1,
        limits: Default::default(),
        answer: common::http::api_error_answer,
    };
    let server = serve(spec, listener, |cfg| {
        cfg.route(
            "/hello",
            web::get().to(|| async { HttpResponse::Ok().finish() }),
        );
    })
    .unwrap();
    tokio::spawn(server);

    let page = reqwest::get(format!("{url}/docs")).await.unwrap();
    assert_eq!(page.url().path(), "/docs/", "/docs leads to /docs/");
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = page.text().await.unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );

    // Every asset the page references is served by the service itself.
    let assets: Vec<String> = html
        .split(['"', '\''])
        .filter(|s| s.starts_with("./") && (s.ends_with(".js") || s.ends_with(".css")))
        .map(|s| s.trim_start_matches("./").to_string())
        .collect();
    assert!(assets.len() >= 3, "scripts and styles: {assets:?}");
    for asset in &assets {
        let r = reqwest::get(format!("{url}/docs/{asset}")).await.unwrap();
        assert_eq!(r.status(), 200, "{asset}");
        assert!(!r.bytes().await.unwrap().is_empty(), "{asset}");
    }
    let initializer = reqwest::get(format!("{url}/docs/swagger-initializer.js"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        initializer.contains("/openapi.json"),
        "the UI reads the service's own document: {initializer}"
    );
    let document = reqwest::get(format!("{url}/openapi.json"))
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert_eq!(document["info"]["title"], "docs-test");
}
