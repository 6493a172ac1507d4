//! The endpoints under `/admin/v1`. `ROUTES` lists every method and path routed here; it is generated
//! from the same table that registers the handlers, so the OpenAPI test can compare it with the
//! document generated from the handlers' annotations (`crate::openapi`).

mod answer;
pub(crate) mod audit;
pub(crate) mod clients;
pub(crate) mod roles;
mod stored;
pub(crate) mod users;

pub use audit::AuditRecord;
pub use clients::{client_view, ClientBody, ClientRecord, ClientWithSecret};
pub use roles::{role_view, valid_role_name, RoleBody, RoleCreate, RoleRecord};
pub use users::{user_view, valid_username, UserBody, UserCreate, UserRecord, PASSWORD_NOT_SET};

use actix_web::middleware::from_fn;
use actix_web::web;

macro_rules! admin_routes {
    ($($path:literal => { $($method:ident : $handler:path),+ $(,)? }),+ $(,)?) => {
        /// Every (method, path) routed under `/admin/v1`, paths in OpenAPI template form.
        pub const ROUTES: &[(&str, &str)] = &[
            $($((stringify!($method), concat!("/admin/v1", $path))),+),+
        ];

        pub fn configure(cfg: &mut web::ServiceConfig) {
            cfg.service(
                web::scope("/admin/v1")
                    .wrap(from_fn(crate::caller::guard))
                    $(.service(web::resource($path)$(.route(web::$method().to($handler)))+))+
            );
        }
    };
}

admin_routes! {
    "/users" => { get: users::list, post: users::create },
    "/users/{username}" => { get: users::get, put: users::replace, delete: users::delete },
    "/roles" => { get: roles::list, post: roles::create },
    "/roles/{name}" => { get: roles::get, put: roles::replace, delete: roles::delete },
    "/clients" => { get: clients::list, post: clients::create },
    "/clients/{client_id}" => { get: clients::get, put: clients::replace, delete: clients::delete },
    "/clients/{client_id}/secret" => { post: clients::rotate_secret },
    "/audit" => { get: audit::list },
}
