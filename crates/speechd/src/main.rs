//! `speechd`: the whole platform in one process on embedded backends (SQLite under the data directory),
//! plus the operator commands. docs/operations.md describes the contract these commands keep.

mod bootstrap;
mod platform;

use clap::{Parser, Subcommand};
use common::service::Service;

#[derive(Parser)]
#[command(
    name = "speechd",
    version,
    about = "Speech analytics platform: all services in one process"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every service (auth on 127.0.0.1:8081, ...), data under $SPEECH_DATA_DIR (default ./data).
    Serve,
    /// Create, idempotently, a company with an admin user and an OAuth client, and print their credentials.
    Bootstrap {
        /// Company short name, e.g. acme.
        #[arg(long)]
        company: String,
        /// Redirect URI registered for the OAuth client (authorization-code flow).
        #[arg(long = "redirect-uri")]
        redirect_uri: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Apply database migrations and exit.
    Migrate,
    /// Retire a company's signing keys and start signing with new ones.
    RotateKeys {
        #[arg(long)]
        company: String,
    },
    /// List the oldest dead letters of an analytics topic (reindex, metadata, delete, score, rescore,
    /// transcribe, callback), one JSON object a line.
    DeadLetters {
        topic: String,
        /// How many at most (100 unless given).
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Put the dead letters of an analytics topic back in its queue, once what failed them is mended.
    ReplayDead {
        topic: String,
        /// How many at most (all unless given).
        #[arg(long)]
        limit: Option<u64>,
    },
}

/// mimalloc rather than glibc's malloc: see the workspace manifest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The data directory holds the database, the secret key, transcripts and the search index.
    common::private_files::keep_new_files_private();
    let cli = Cli::parse();
    let platform = platform::Platform::from_env()?;
    match cli.command {
        Command::Serve => {
            let _telemetry = common::telemetry::init("speechd", &platform.auth.common.log_format);
            platform.serve().await
        }
        Command::Bootstrap {
            company,
            redirect_uri,
            json,
        } => {
            let _telemetry = common::telemetry::init("speechd", "text");
            let output = bootstrap::run(&platform, &company, &redirect_uri).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&output)?);
            } else {
                for (key, value) in output.as_object().into_iter().flatten() {
                    println!(
                        "{key}: {}",
                        value
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| value.to_string())
                    );
                }
            }
            Ok(())
        }
        Command::Migrate => {
            let db = platform.database().await?;
            platform.migrate(&db).await?;
            println!(
                "migrations applied to {}",
                common::db::redact(&platform.auth.common.database_url)
            );
            Ok(())
        }
        Command::DeadLetters { topic, limit } => {
            let service = platform.analytics().await?;
            analytics_core::jobs::dead::command(&service.state, false, &topic, limit).await
        }
        Command::ReplayDead { topic, limit } => {
            let _telemetry = common::telemetry::init("speechd", "text");
            let service = platform.analytics().await?;
            analytics_core::jobs::dead::command(&service.state, true, &topic, limit).await
        }
        Command::RotateKeys { company } => {
            let _telemetry = common::telemetry::init("speechd", "text");
            let service = auth::AuthService::connect(platform.auth.clone()).await?;
            if directory::get_company(&service.state.db, &company)
                .await?
                .is_none()
            {
                anyhow::bail!("no company {company}");
            }
            let keys = service.state.keys.rotate(&company).await?;
            println!(
                "{company}: access tokens now signed with {}, ID tokens with {}",
                keys.access.kid, keys.id_token.kid
            );
            Ok(())
        }
    }
}
