//! 405 with `Allow` for a path of the service asked with a method it does not answer, on every service
//! alike. The paths and their methods are read from the service's own OpenAPI document, so what a
//! client is told is allowed is what the document says; a path no template of the document matches is
//! left to the routes (404 in the service's format).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::web;
use utoipa::openapi::OpenApi;

use super::limits::ErrorAnswer;

/// The methods of each path template of a document.
pub(crate) struct Methods {
    templates: Vec<(Vec<Segment>, Vec<&'static str>)>,
    answer: ErrorAnswer,
}

enum Segment {
    Literal(String),
    /// `{name}`: any one segment that is not empty.
    Parameter,
}

impl Methods {
    pub(crate) fn of(document: &OpenApi, answer: ErrorAnswer) -> Methods {
        let templates = document
            .paths
            .paths
            .iter()
            .map(|(template, item)| {
                let segments = template
                    .split('/')
                    .map(|s| {
                        if s.starts_with('{') && s.ends_with('}') {
                            Segment::Parameter
                        } else {
                            Segment::Literal(s.to_string())
                        }
                    })
                    .collect();
                let methods = [
                    ("GET", item.get.is_some()),
                    ("HEAD", item.head.is_some()),
                    ("POST", item.post.is_some()),
                    ("PUT", item.put.is_some()),
                    ("PATCH", item.patch.is_some()),
                    ("DELETE", item.delete.is_some()),
                    ("OPTIONS", item.options.is_some()),
                    ("TRACE", item.trace.is_some()),
                ]
                .into_iter()
                .filter_map(|(name, has)| has.then_some(name))
                .collect();
                (segments, methods)
            })
            .collect();
        Methods { templates, answer }
    }

    /// The methods the document gives `path`, over every template it matches; None when it matches none.
    pub(crate) fn allowed(&self, path: &str) -> Option<Vec<&'static str>> {
        let count = path.split('/').count();
        let mut allowed: Option<Vec<&'static str>> = None;
        for (segments, methods) in &self.templates {
            let matches = segments.len() == count
                && segments.iter().zip(path.split('/')).all(|(s, p)| match s {
                    Segment::Literal(l) => l == p,
                    Segment::Parameter => !p.is_empty(),
                });
            if matches {
                let all = allowed.get_or_insert_with(Vec::new);
                for method in methods {
                    if !all.contains(method) {
                        all.push(method);
                    }
                }
            }
        }
        allowed
    }
}

/// Middleware: when routing found nothing for the request (404 or 405 from the framework) and the
/// document gives its path other methods, answers 405 with `Allow`. A routed request costs nothing here.
pub(crate) async fn allow(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let response = next.call(req).await?;
    let status = response.status();
    if status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED {
        return Ok(response.map_into_left_body());
    }
    let Some(methods) = response.request().app_data::<web::Data<Methods>>().cloned() else {
        return Ok(response.map_into_left_body());
    };
    let method = response.request().method().clone();
    let refused = methods
        .allowed(response.request().path())
        .filter(|allowed| !allowed.contains(&method.as_str()));
    let Some(allowed) = refused else {
        return Ok(response.map_into_left_body());
    };
    let allow = allowed.join(", ");
    let mut answer = (methods.answer)(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("the method {method} is not allowed here; this path answers {allow}"),
    );
    answer.headers_mut().insert(
        header::ALLOW,
        header::HeaderValue::from_str(&allow).expect("method names are valid header text"),
    );
    let (req, _) = response.into_parts();
    Ok(ServiceResponse::new(req, answer).map_into_right_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
    use utoipa::openapi::{OpenApiBuilder, PathsBuilder};

    fn document() -> OpenApi {
        let item = |methods: &[HttpMethod]| {
            let mut item = PathItem::new(methods[0].clone(), OperationBuilder::new().build());
            for m in &methods[1..] {
                let other = PathItem::new(m.clone(), OperationBuilder::new().build());
                item.merge_operations(other);
            }
            item
        };
        OpenApiBuilder::new()
            .paths(
                PathsBuilder::new()
                    .path(
                        "/v3/projects/{key}",
                        item(&[HttpMethod::Get, HttpMethod::Delete]),
                    )
                    .path("/v3/{key}/track", item(&[HttpMethod::Post]))
                    .path("/healthz", item(&[HttpMethod::Get])),
            )
            .build()
    }

    fn answer(status: StatusCode, message: String) -> actix_web::HttpResponse {
        actix_web::HttpResponse::build(status).body(message)
    }

    #[test]
    fn a_path_has_the_methods_of_every_template_it_matches() {
        let methods = Methods::of(&document(), answer);
        assert_eq!(methods.allowed("/healthz"), Some(vec!["GET"]));
        assert_eq!(
            methods.allowed("/v3/projects/abc"),
            Some(vec!["GET", "DELETE"])
        );
        assert_eq!(
            methods.allowed("/v3/projects/track"),
            Some(vec!["GET", "DELETE", "POST"])
        );
        assert_eq!(methods.allowed("/v3/projects/"), None);
        assert_eq!(methods.allowed("/v3/projects/abc/more"), None);
        assert_eq!(methods.allowed("/nowhere"), None);
    }

    #[actix_web::test]
    async fn another_method_is_answered_405_with_allow_in_the_service_format() {
        use actix_web::{middleware::from_fn, test, App, HttpResponse};
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(Methods::of(&document(), answer)))
                .wrap(from_fn(allow))
                .route("/healthz", web::get().to(HttpResponse::Ok))
                .route("/v3/projects/{key}", web::get().to(HttpResponse::Ok)),
        )
        .await;
        let refused = test::TestRequest::put().uri("/healthz").to_request();
        let refused = test::call_service(&app, refused).await;
        assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(refused.headers().get(header::ALLOW).unwrap(), "GET");
        let body = test::read_body(refused).await;
        assert!(String::from_utf8_lossy(&body).contains("PUT is not allowed"));

        let get = test::TestRequest::get()
            .uri("/v3/projects/abc")
            .to_request();
        assert_eq!(test::call_service(&app, get).await.status(), StatusCode::OK);
        let unknown = test::TestRequest::put().uri("/elsewhere").to_request();
        assert_eq!(
            test::call_service(&app, unknown).await.status(),
            StatusCode::NOT_FOUND
        );
    }
}
