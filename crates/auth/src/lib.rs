//! The OAuth 2.0 / OpenID Connect token service (docs/token-service.md): client-credentials,
//! authorization-code (with PKCE and a login page) and refresh-token grants, discovery, JWKS with key
//! rotation, userinfo, introspection and revocation, per company under `/oauth/<company>`.

pub mod client_auth;
pub mod config;
pub mod csrf;
pub mod error;
pub mod form;
pub mod issue;
pub mod keys;
pub mod login;
pub mod openapi;
pub mod page;
pub mod password;
pub mod pkce;
pub mod rate_limit;
pub mod routes;
pub mod scope;
pub mod standing;
pub mod state;
pub mod storage;
pub mod verify;

#[cfg(feature = "testing")]
pub mod testing;

use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::web;
use common::db::{now_millis, Database};
use common::http::{serve, HttpMetrics, Readiness, ServerSpec};
use common::service::Service;

pub use config::AuthConfig;
pub use state::AuthState;

/// The OpenAPI document of the token service, generated from its handlers and types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    openapi::document()
}

/// A ready-to-serve token service: migrated database and shared state.
#[derive(Clone)]
pub struct AuthService {
    pub state: web::Data<AuthState>,
}

#[async_trait::async_trait]
impl Service for AuthService {
    const NAME: &'static str = "auth";
    type Config = AuthConfig;

    /// Applies the migrations the token service needs: the directory, the revocation list and its own tables
    /// (in that order: its own migrations build on the other two).
    async fn migrate(db: &Database) -> anyhow::Result<()> {
        db.migrate(&directory::MIGRATIONS).await?;
        db.migrate(&revocation::MIGRATIONS).await?;
        db.migrate(&storage::MIGRATIONS).await?;
        Ok(())
    }

    async fn with_database(config: AuthConfig, db: Database) -> anyhow::Result<AuthService> {
        Self::migrate(&db).await?;
        Ok(AuthService {
            state: web::Data::new(AuthState::new(config, db)?),
        })
    }

    /// Serves on `listener` and starts the housekeeping task (purging expired codes and revocations).
    fn serve(&self, listener: TcpListener) -> std::io::Result<Server> {
        let state = self.state.clone();
        let spec = ServerSpec {
            name: Self::NAME,
            openapi: openapi(),
            readiness: Readiness::database(state.db.clone()),
            metrics: HttpMetrics::new(Self::NAME),
            workers: state.config.common.workers,
            limits: state.config.common.http_limits(),
            answer: routes::server_answer,
        };
        let housekeeping = state.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(600));
            loop {
                tick.tick().await;
                let now = now_millis();
                if let Err(e) = storage::purge_expired(&housekeeping.db, now).await {
                    tracing::warn!(error = %e, "purging expired tokens failed");
                }
                if let Err(e) = revocation::purge_expired(&housekeeping.db, now).await {
                    tracing::warn!(error = %e, "purging expired revocations failed");
                }
            }
        });
        serve(spec, listener, move |cfg| {
            cfg.app_data(state.clone()).configure(routes::configure);
        })
    }
}
