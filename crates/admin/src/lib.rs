//! The administration service: users, roles, OAuth clients and the audit log under `/admin/v1`, written
//! through the directory crate it shares with the token service (docs/architecture.md). Callers present
//! bearer tokens of the token service; see `caller` for authentication, permissions and limits, and
//! `docs/admin-api.md` for the decisions.

pub mod api;
pub mod audit;
pub mod caller;
pub mod config;
pub mod openapi;
pub mod precondition;
pub mod query;
pub mod rate_limit;
pub mod revoke;
pub mod routes;
pub mod schema;
pub mod state;
pub mod storage;

#[cfg(feature = "testing")]
pub mod testing;

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::web;
use common::db::Database;
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::service::Service;

pub use config::AdminConfig;
pub use state::AdminState;

/// The OpenAPI document of the administration service, generated from its handlers and types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::document()
}

/// A ready-to-serve administration service: migrated database and shared state.
#[derive(Clone)]
pub struct AdminService {
    pub state: web::Data<AdminState>,
}

#[async_trait::async_trait]
impl Service for AdminService {
    const NAME: &'static str = "admin";
    type Config = AdminConfig;

    /// Applies the migrations the administration service needs: the directory, the revocation list it reads
    /// and its own tables.
    async fn migrate(db: &Database) -> anyhow::Result<()> {
        db.migrate(&directory::MIGRATIONS).await?;
        db.migrate(&revocation::MIGRATIONS).await?;
        db.migrate(&storage::MIGRATIONS).await?;
        Ok(())
    }

    async fn with_database(config: AdminConfig, db: Database) -> anyhow::Result<AdminService> {
        Self::migrate(&db).await?;
        Ok(AdminService {
            state: web::Data::new(AdminState::new(config, db)?),
        })
    }

    /// Serves on `listener` and starts the rate limiter's synchronization task.
    fn serve(&self, listener: TcpListener) -> std::io::Result<Server> {
        let state = self.state.clone();
        let spec = ServerSpec {
            name: Self::NAME,
            openapi: openapi(),
            readiness: Readiness::database(state.db.clone()),
            metrics: HttpMetrics::new(Self::NAME),
            workers: state.config.common.workers,
            limits: state.config.common.http_limits(),
            answer: common::http::api_error_answer,
        };
        state.limiter.spawn_background();
        let verifier = web::Data::new(state.verifier.clone());
        serve(spec, listener, move |cfg| {
            cfg.app_data(state.clone())
                .app_data(verifier.clone())
                .configure(routes::configure);
        })
    }
}
