//! The session of a signed-in page: found by the hash of the id in its cookie, for the company of the
//! page's path only (a session of one company opens none of another's pages), its token unsealed for
//! the API calls. Without one, the page answers with a redirect to sign in and back.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpRequest};
use common::secrets::{constant_time_eq, hash_token};

use crate::api::Api;
use crate::error::ConsoleError;
use crate::pages::layout::Signed;
use crate::sessions;
use crate::state::Console;

/// The cookie that holds the session's id.
pub const SESSION_COOKIE: &str = "console_session";

/// A signed-in user of the path's company.
pub struct Session {
    pub console: Data<Console>,
    pub row: sessions::SessionRow,
    pub token: String,
    /// The page's path and query, to come back to after signing in again.
    pub here: String,
}

impl Session {
    /// The API on this user's behalf.
    pub fn api(&self) -> Api<'_> {
        Api::new(
            &self.console,
            self.token.clone(),
            &self.row.company,
            &self.here,
        )
    }

    /// The frame's view of the session.
    pub fn signed(&self) -> Signed<'_> {
        Signed {
            company: &self.row.company,
            username: &self.row.username,
            csrf: &self.row.csrf,
            auth_origin: self.console.settings.auth_origin(),
        }
    }

    /// Refuses a form whose `csrf` is not this session's.
    pub fn check_csrf(&self, sent: &str) -> Result<(), ConsoleError> {
        if constant_time_eq(sent.as_bytes(), self.row.csrf.as_bytes()) {
            Ok(())
        } else {
            Err(ConsoleError::Forbidden)
        }
    }
}

impl FromRequest for Session {
    type Error = ConsoleError;
    type Future = Pin<Box<dyn Future<Output = Result<Session, ConsoleError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let console = req.app_data::<Data<Console>>().cloned();
        let company = req
            .match_info()
            .get("company")
            .unwrap_or_default()
            .to_string();
        let here = match req.uri().query() {
            Some(query) => format!("{}?{query}", req.path()),
            None => req.path().to_string(),
        };
        let cookie = req.cookie(SESSION_COOKIE).map(|c| c.value().to_string());
        Box::pin(async move {
            let console =
                console.ok_or_else(|| ConsoleError::internal("the console is not configured"))?;
            let sign_in = || ConsoleError::SignIn {
                company: company.clone(),
                back_to: here.clone(),
            };
            let id = cookie.ok_or_else(sign_in)?;
            let id_hash = hash_token(&id);
            let row = sessions::find(&console.db, &id_hash, common::db::now_millis())
                .await?
                .ok_or_else(sign_in)?;
            if !constant_time_eq(row.company.as_bytes(), company.as_bytes()) {
                return Err(sign_in());
            }
            let token = console
                .keys
                .seal
                .open(&row.id_hash, &row.access_token)
                .ok_or_else(sign_in)?;
            Ok(Session {
                console,
                row,
                token,
                here,
            })
        })
    }
}
