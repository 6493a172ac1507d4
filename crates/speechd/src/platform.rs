//! The configuration of the one-process platform: each service's configuration loaded as its own binary
//! would load it, then pointed at the shared embedded database and secret key under the data directory
//! unless `DATABASE_URL` or `SPEECH_SECRET_KEY` say otherwise.

use std::path::PathBuf;

use anyhow::Context;
use auth::{AuthConfig, AuthService};
use common::db::Database;
use common::secrets::SecretKey;

pub struct Platform {
    pub data_dir: PathBuf,
    pub auth: AuthConfig,
}

impl Platform {
    pub fn from_env() -> anyhow::Result<Platform> {
        let data_dir =
            PathBuf::from(std::env::var("SPEECH_DATA_DIR").unwrap_or_else(|_| "./data".into()));
        std::fs::create_dir_all(&data_dir)
            .with_context(|| format!("creating data directory {}", data_dir.display()))?;
        let database_url = match std::env::var("DATABASE_URL") {
            Ok(url) => url,
            Err(_) => format!("sqlite://{}", data_dir.join("speech.db").display()),
        };
        let secret_key = match std::env::var("SPEECH_SECRET_KEY") {
            Ok(key) => key,
            Err(_) => load_or_create_secret(&data_dir)?,
        };
        // The shared settings are filled in before validation, so a missing secret is not an error here.
        std::env::set_var("SPEECH_SECRET_KEY", &secret_key);
        std::env::set_var("DATABASE_URL", &database_url);
        let auth: AuthConfig = common::config::load()?;
        Ok(Platform { data_dir, auth })
    }

    pub async fn database(&self) -> anyhow::Result<Database> {
        Ok(Database::connect(&self.auth.database_url, self.auth.db_max_connections).await?)
    }

    pub fn auth_url(&self) -> String {
        self.auth.public_url()
    }

    pub async fn serve(&self) -> anyhow::Result<()> {
        let auth = AuthService::connect(self.auth.clone()).await?;
        let auth_server = auth.serve(
            common::http::bind(&self.auth.addr)
                .with_context(|| format!("binding {}", self.auth.addr))?,
        )?;
        tracing::info!(addr = %self.auth.addr, "auth service listening");
        eprintln!(
            "speechd is running: auth {url}\nCreate a company and its credentials with:\n  speechd bootstrap --company acme --redirect-uri http://localhost:3000/callback --json",
            url = self.auth_url()
        );
        let handles = vec![auth_server.handle()];
        tokio::spawn(async move {
            common::http::wait_for_signal().await;
            for handle in handles {
                handle.stop(true).await;
            }
        });
        auth_server.await?;
        Ok(())
    }
}

/// The secret key of an embedded installation, kept in `<data>/secret.key` (created once, mode 0600).
fn load_or_create_secret(data_dir: &std::path::Path) -> anyhow::Result<String> {
    let path = data_dir.join("secret.key");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return Ok(text.trim().to_string());
    }
    let key = SecretKey::generate().to_base64();
    write_private(&path, &key)?;
    Ok(key)
}

/// Writes a file only its owner can read.
pub fn write_private(path: &std::path::Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(contents.as_bytes())?;
    Ok(())
}
