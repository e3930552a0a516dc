//! The sandbox: a private PostgreSQL for `demo`, `sandbox` and the tests.

mod binaries;
mod cluster;
mod database;
pub mod fixture;
mod pooler;
mod process;
pub mod protocol;
mod reaper;
pub mod sim;

pub use binaries::{BINDIR_OVERRIDE, ServerBinaries};
pub use cluster::{KeptCluster, PrivateCluster, StandbyRecipe};
pub use database::{SANDBOX_DATABASE, SandboxDatabase, SandboxFailure, SandboxSchema};
pub use pooler::{PoolMode, PoolerConfig, PrivatePooler};

/// Why a private cluster could not be started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "no PostgreSQL server binaries (initdb, postgres) were found in PATH, `pg_config --bindir` \
         or /usr/lib/postgresql/*/bin: install the PostgreSQL server package \
         (for example `apt-get install postgresql`) or pass --database-url"
    )]
    NoServerBinaries,
    #[error(
        "PostgreSQL refuses to run as root and there is no `postgres` user to run it as: \
         install the PostgreSQL server package (it creates that user) or run as another user"
    )]
    NoUnprivilegedUser,
    #[error(
        "PgBouncer was not found in PATH or /usr/sbin: install it (for example `apt-get \
         install pgbouncer`)"
    )]
    NoPooler,
    #[error("the private PgBouncer did not start: {0}")]
    PoolerStart(String),
    #[error("initdb failed: {0}")]
    Initdb(String),
    #[error("the private PostgreSQL did not start: {0}")]
    Start(String),
    #[error("the private PostgreSQL did not stop cleanly: {0}")]
    Stop(String),
    #[error("could not {action}: {source}")]
    Io {
        action: String,
        source: std::io::Error,
    },
}

impl SandboxError {
    fn io(action: &str, source: std::io::Error) -> Self {
        Self::Io {
            action: action.to_string(),
            source,
        }
    }
}
