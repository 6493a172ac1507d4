//! What the console's handlers share: its settings, the database of its sessions, the keys derived from
//! the server key, the HTTP client that calls the token service and the API, and where pages' CPU work
//! runs.

use common::db::Database;
use common::secrets::SecretKey;

use crate::client;
use crate::offload::Runner;
use crate::settings::ConsoleSettings;

/// What the console's handlers share: its settings, the database of its sessions, the keys derived
/// from the server key and the HTTP client it calls the token service and the API with.
pub struct Console {
    pub settings: ConsoleSettings,
    pub db: Database,
    pub keys: client::Keys,
    pub http: reqwest::Client,
    /// Where a page's CPU work runs, off the HTTP workers.
    pub runner: Runner,
}

impl Console {
    pub fn new(
        settings: ConsoleSettings,
        db: Database,
        server_key: &SecretKey,
        runner: Runner,
    ) -> Console {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .expect("a client without TLS options builds");
        Console {
            settings,
            db,
            keys: client::Keys::new(server_key),
            http,
            runner,
        }
    }
}
