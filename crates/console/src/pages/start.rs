//! The start page: which company to sign in to.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use maud::html;

use super::layout;

/// The form, with the refused name when there was one.
pub fn page(status: StatusCode, refused: Option<&str>) -> HttpResponse {
    layout::page(
        status,
        "Sign in",
        None,
        html! {
            form.start method="get" action="/console/" {
                label for="company" { "Company" }
                input id="company" type="text" name="company" required autocomplete="organization"
                    aria-describedby=[refused.map(|_| "company-error")] value=[refused];
                @if let Some(name) = refused {
                    p.error id="company-error" role="alert" {
                        (format!("{name:?} is not a company name: 1 to 64 characters of a-z, 0-9, - and _."))
                    }
                }
                button type="submit" { "Continue" }
            }
        },
    )
}
