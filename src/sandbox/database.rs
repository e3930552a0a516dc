//! A private cluster with one database holding the sandbox schema: what `demo` and `sandbox`
//! run on.

use sqlx::{ConnectOptions, Connection};

use super::{PrivateCluster, SandboxError};
use crate::store::connect::Target;
use crate::store::schema;

/// The database the sandbox creates inside its private cluster.
pub const SANDBOX_DATABASE: &str = "sandbox";

/// How much of the schema the sandbox database gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxSchema {
    /// The platform stand-in only: a rehearsal seeds it, then applies 0009 itself.
    PlatformStandIn,
    /// Stand-in, migration 0009 and the console's own schema.
    Full,
}

/// A running private cluster and its migrated database, and optionally a hot standby of it.
/// Dropping it deletes them all.
pub struct SandboxDatabase {
    /// Dropped before the primary: a standby outliving its primary only logs reconnects.
    standby: Option<PrivateCluster>,
    cluster: PrivateCluster,
}

impl SandboxDatabase {
    pub async fn start(schema_level: SandboxSchema) -> Result<Self, SandboxFailure> {
        // Cluster start-up blocks (initdb, readiness polling); keep it off the async workers.
        // The spawning thread must outlive the server, which PrivateCluster guarantees by
        // spawning from its own keeper thread.
        let cluster = tokio::task::spawn_blocking(PrivateCluster::start)
            .await
            .map_err(|e| SandboxFailure::Sandbox(SandboxError::Start(e.to_string())))??;
        let mut admin = cluster
            .connect_options("postgres")
            .connect()
            .await
            .map_err(SandboxFailure::Database)?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE \"{SANDBOX_DATABASE}\""
        )))
        .execute(&mut admin)
        .await
        .map_err(SandboxFailure::Database)?;
        admin.close().await.map_err(SandboxFailure::Database)?;

        let mut conn = cluster
            .connect_options(SANDBOX_DATABASE)
            .connect()
            .await
            .map_err(SandboxFailure::Database)?;
        match schema_level {
            SandboxSchema::PlatformStandIn => {
                schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN).await?
            }
            SandboxSchema::Full => schema::apply_sandbox_schema(&mut conn).await?,
        }
        conn.close().await.map_err(SandboxFailure::Database)?;
        Ok(Self {
            standby: None,
            cluster,
        })
    }

    /// Starts a streaming hot standby of the database (its schema included).
    pub async fn start_standby(&mut self) -> Result<(), SandboxFailure> {
        // Blocking like the primary's start: off the async workers.
        let recipe = self.cluster.standby_recipe();
        let standby = tokio::task::spawn_blocking(move || recipe.start())
            .await
            .map_err(|e| SandboxFailure::Sandbox(SandboxError::Start(e.to_string())))??;
        self.standby = Some(standby);
        Ok(())
    }

    /// The standby, once started.
    pub(crate) fn standby(&self) -> Option<&PrivateCluster> {
        self.standby.as_ref()
    }

    pub fn standby_mut(&mut self) -> Option<&mut PrivateCluster> {
        self.standby.as_mut()
    }

    /// The primary's cluster, to stop or start it (a failover rehearsal).
    pub fn cluster_mut(&mut self) -> &mut PrivateCluster {
        &mut self.cluster
    }

    /// A URL of the sandbox database on the standby.
    pub fn standby_url(&self) -> Option<String> {
        self.standby.as_ref().map(|s| s.url(SANDBOX_DATABASE))
    }

    pub(crate) fn cluster(&self) -> &PrivateCluster {
        &self.cluster
    }

    /// The sandbox database as a connection target.
    pub(crate) fn target(&self) -> Target {
        Target::from_options(self.cluster.connect_options(SANDBOX_DATABASE))
    }

    /// A URL for `psql` or `--database-url`.
    pub fn url(&self) -> String {
        self.cluster.url(SANDBOX_DATABASE)
    }

    /// Stops the server and deletes its directory, reporting any problem.
    pub fn stop(self) -> Result<(), SandboxError> {
        let standby = self.standby.map_or(Ok(()), PrivateCluster::stop);
        self.cluster.stop().and(standby)
    }
}

/// Why the sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxFailure {
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("the private PostgreSQL started but could not be prepared: {0}")]
    Database(sqlx::Error),
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
}
