//! The frame of every page: the document head with the console's own stylesheet and script, a skip
//! link, the navigation of the signed-in company with the sign-out button (a form carrying the session's
//! CSRF token), and the headers every page is sent with (a content security policy allowing only the
//! console's own assets, no framing, no caching).

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use maud::{html, Markup, DOCTYPE};

/// Who is signed in, as the frame shows it.
pub struct Signed<'a> {
    pub company: &'a str,
    pub username: &'a str,
    pub csrf: &'a str,
    /// The token service's origin as browsers reach it: sign-out goes on there.
    pub auth_origin: &'a str,
}

/// The frame around `content`, titled `title`.
pub fn frame(title: &str, signed: Option<&Signed<'_>>, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Speech analytics" }
                link rel="stylesheet" href="/console/assets/console.css";
                link rel="stylesheet" href="/console/assets/uPlot.min.css";
                script src="/console/assets/uPlot.iife.min.js" defer {}
                script src="/console/assets/console.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    @if let Some(signed) = signed {
                        a.brand href={ "/console/" (signed.company) "/" } { "Speech analytics" }
                        nav aria-label="Console" {
                            ul {
                                li { a href={ "/console/" (signed.company) "/" } { "Folders" } }
                                li { a href={ "/console/" (signed.company) "/search" } { "Search" } }
                                li { a href={ "/console/" (signed.company) "/apps" } { "Applications" } }
                                li { a href={ "/console/" (signed.company) "/jobs" } { "Jobs" } }
                            }
                        }
                        form.signout method="post" action={ "/console/" (signed.company) "/signout" } {
                            input type="hidden" name="csrf" value=(signed.csrf);
                            span.who { (signed.username) " · " (signed.company) }
                            button type="submit" { "Sign out" }
                        }
                    } @else {
                        span.brand { "Speech analytics" }
                    }
                }
                main id="main" {
                    h1 { (title) }
                    (content)
                }
            }
        }
    }
}

/// A page: the frame with the console's headers.
pub fn page(
    status: StatusCode,
    title: &str,
    signed: Option<&Signed<'_>>,
    content: Markup,
) -> HttpResponse {
    // Browsers hold the redirects that follow a form to its form-action too: sign-out's ends at the
    // token service.
    let form_action = match signed {
        Some(signed) => format!("'self' {}", signed.auth_origin),
        None => "'self'".to_string(),
    };
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Referrer-Policy", "same-origin"))
        .insert_header((
            "Content-Security-Policy",
            format!(
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 media-src 'self'; connect-src 'self'; form-action {form_action}; \
                 frame-ancestors 'none'; base-uri 'none'"
            ),
        ))
        .body(frame(title, signed, content).into_string())
}

/// A `303` to `location` (after a form, or on to the next step of signing in), never cached.
pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, location))
        .insert_header(("Cache-Control", "no-store"))
        .finish()
}

/// An error page saying `message`.
pub fn error_page(status: StatusCode, message: &str) -> HttpResponse {
    let title = status.canonical_reason().unwrap_or("Error");
    page(
        status,
        title,
        None,
        html! {
            p.error role="alert" { (message) }
            p { a href="/console/" { "Back to the console" } }
        },
    )
}
