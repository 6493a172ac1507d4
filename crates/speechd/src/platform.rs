//! The configuration of the one-process platform: each service's configuration loaded as its own binary
//! would load it, then pointed at the shared embedded database and secret key under the data directory
//! unless `DATABASE_URL` or `SPEECH_SECRET_KEY` say otherwise.

use std::path::PathBuf;

use admin::{AdminConfig, AdminService};
use analytics::{AnalyticsConfig, AnalyticsService};
use anyhow::Context;
use auth::{AuthConfig, AuthService};
use common::db::Database;
use common::secrets::SecretKey;
use common::service::Service;
use ingest::{IngestConfig, IngestService};

pub struct Platform {
    pub data_dir: PathBuf,
    pub auth: AuthConfig,
    pub admin: AdminConfig,
    pub analytics: AnalyticsConfig,
    pub ingest: IngestConfig,
}

impl Platform {
    pub fn from_env() -> anyhow::Result<Platform> {
        let data_dir =
            PathBuf::from(std::env::var("SPEECH_DATA_DIR").unwrap_or_else(|_| "./data".into()));
        std::fs::create_dir_all(&data_dir)
            .with_context(|| format!("creating data directory {}", data_dir.display()))?;
        // The database and the secret key live here: no one but the owner may read them.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("restricting {} to its owner", data_dir.display()))?;
        }
        let database_url = match std::env::var("DATABASE_URL") {
            Ok(url) => url,
            Err(_) => format!("sqlite://{}", data_dir.join("speech.db").display()),
        };
        let secret_key = match std::env::var("SPEECH_SECRET_KEY") {
            Ok(key) => key,
            Err(_) => load_or_create_secret(&data_dir)?,
        };
        // Every service of the process uses the same database and key, and this process's token service.
        let mut chosen = vec![
            ("secret_key", secret_key.as_str()),
            ("database_url", database_url.as_str()),
        ];
        let auth: AuthConfig = common::config::load_with(&chosen)?;
        let auth_url = std::env::var("SPEECH_AUTH_URL")
            .unwrap_or_else(|_| format!("http://{}", auth.common.addr));
        chosen.push(("auth_url", &auth_url));
        let mut admin: AdminConfig = common::config::load_with(&chosen)?;
        admin
            .common
            .public_auth_url
            .get_or_insert_with(|| auth.public_url());
        let mut analytics: AnalyticsConfig = common::config::load_with(&chosen)?;
        analytics
            .common
            .public_auth_url
            .get_or_insert_with(|| auth.public_url());
        let mut ingest: IngestConfig = common::config::load_with(&chosen)?;
        ingest
            .common
            .public_auth_url
            .get_or_insert_with(|| auth.public_url());
        // The embedded object store and search index live under the data directory unless set apart.
        if std::env::var("SPEECH_ANALYTICS_DATA_DIR").is_err() {
            analytics.data_dir = data_dir.join("analytics");
        }
        Ok(Platform {
            data_dir,
            auth,
            admin,
            analytics,
            ingest,
        })
    }

    /// The one pool every service of the process shares, as large as the largest any of them asks for.
    pub async fn database(&self) -> anyhow::Result<Database> {
        let connections = self
            .auth
            .common
            .db_max_connections
            .max(self.admin.common.db_max_connections)
            .max(self.analytics.common.db_max_connections)
            .max(self.ingest.common.db_max_connections);
        let db = Database::connect(&self.auth.common.database_url, connections).await?;
        // SQLite creates its files with the process umask; they hold password and secret hashes.
        #[cfg(unix)]
        if let Some(path) = self.auth.common.database_url.strip_prefix("sqlite://") {
            use std::os::unix::fs::PermissionsExt;
            for suffix in ["", "-wal", "-shm"] {
                let file = format!("{path}{suffix}");
                if std::path::Path::new(&file).exists() {
                    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
                }
            }
        }
        Ok(db)
    }

    /// Applies the migrations of every service.
    pub async fn migrate(&self, db: &Database) -> anyhow::Result<()> {
        AuthService::migrate(db).await?;
        AdminService::migrate(db).await?;
        AnalyticsService::migrate(db).await?;
        IngestService::migrate(db).await?;
        Ok(())
    }

    /// The analytics service on the platform's database, migrated, for an operator command.
    pub async fn analytics(&self) -> anyhow::Result<AnalyticsService> {
        let db = self.database().await?;
        self.migrate(&db).await?;
        AnalyticsService::with_database(self.analytics.clone(), db).await
    }

    pub fn auth_url(&self) -> String {
        self.auth.public_url()
    }

    pub fn api_url(&self) -> String {
        format!("http://{}", self.admin.common.addr)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.analytics.common.addr)
    }

    pub fn track_url(&self) -> String {
        format!("http://{}", self.ingest.common.addr)
    }

    pub async fn serve(&self) -> anyhow::Result<()> {
        // The four servers share the process's open files.
        common::http::fd_limit::raise(4);
        let db = self.database().await?;
        self.migrate(&db).await?;
        let auth = AuthService::with_database(self.auth.clone(), db.clone()).await?;
        let admin = AdminService::with_database(self.admin.clone(), db.clone()).await?;
        let analytics = AnalyticsService::with_database(self.analytics.clone(), db.clone()).await?;
        let ingest = IngestService::with_database(self.ingest.clone(), db).await?;
        let bind = |addr: &str| common::http::bind(addr).with_context(|| format!("binding {addr}"));
        let servers = vec![
            auth.serve(bind(&self.auth.common.addr)?)?,
            admin.serve(bind(&self.admin.common.addr)?)?,
            analytics.serve(bind(&self.analytics.common.addr)?)?,
            ingest.serve(bind(&self.ingest.common.addr)?)?,
        ];
        let workers = analytics.spawn_workers();
        tracing::info!(auth = %self.auth.common.addr, admin = %self.admin.common.addr,
            analytics = %self.analytics.common.addr, ingest = %self.ingest.common.addr, "speechd listening");
        eprintln!(
            "speechd is running: auth {auth}, admin {admin}, analytics {analytics}, ingest {ingest}\nCreate a company and its \
             credentials with:\n  {exe} bootstrap --company acme --redirect-uri http://localhost:3000/callback --json",
            auth = self.auth_url(),
            admin = self.api_url(),
            analytics = self.base_url(),
            ingest = self.track_url(),
            exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "speechd".into()),
        );
        common::http::run_until_signal(servers).await?;
        workers.stop().await;
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

#[cfg(test)]
mod tests {
    use common::testing::with_config_env;

    use super::*;

    /// The services get the shared database, key and token service from the platform, not through the
    /// process's environment, which stays as it was.
    #[test]
    fn the_platform_shares_its_settings_without_changing_the_environment() {
        let dir = std::env::temp_dir().join(format!("speechd-platform-{}", std::process::id()));
        let platform = with_config_env(&[("SPEECH_DATA_DIR", dir.to_str().unwrap())], || {
            let platform = Platform::from_env().expect("loads");
            for name in ["DATABASE_URL", "SPEECH_SECRET_KEY", "SPEECH_AUTH_URL"] {
                assert!(std::env::var(name).is_err(), "{name} was set");
            }
            platform
        });
        let database_url = format!("sqlite://{}", dir.join("speech.db").display());
        let auth_url = format!("http://{}", platform.auth.common.addr);
        assert_eq!(platform.auth.common.database_url, database_url);
        for common in [
            &platform.admin.common,
            &platform.analytics.common,
            &platform.ingest.common,
        ] {
            assert_eq!(common.database_url, database_url);
            assert_eq!(common.secret_key, platform.auth.common.secret_key);
        }
        assert!(platform.auth.common.secret_key.is_some());
        assert_eq!(platform.admin.auth_url, auth_url);
        assert_eq!(platform.analytics.auth_url, auth_url);
        assert_eq!(platform.ingest.auth_url, auth_url);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
