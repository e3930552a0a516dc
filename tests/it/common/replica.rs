//! A real streaming pair for the replication tests: a private primary with the sandbox schema
//! and a hot standby made from it with `pg_basebackup`, both on Unix sockets of their own.

use std::str::FromStr;
use std::time::{Duration, Instant};

use bootstrap_console::sandbox::{SandboxDatabase, SandboxSchema};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

pub struct Pair {
    pub sandbox: SandboxDatabase,
    /// Pools on the primary and on the standby (test sessions: not the console's).
    pub primary: PgPool,
    pub standby: PgPool,
}

/// The test's own sessions commit synchronously (the sandbox's default is asynchronous):
/// once a fixture's commit returns, its WAL is written, so `replayed` waits for it.
async fn pool(url: &str) -> PgPool {
    let options = PgConnectOptions::from_str(url)
        .expect("url")
        .options([("synchronous_commit", "on")]);
    PgPoolOptions::new()
        .max_connections(3)
        .connect_with(options)
        .await
        .expect("connect")
}

impl Pair {
    pub async fn start() -> Self {
        let mut sandbox = SandboxDatabase::start(SandboxSchema::Full)
            .await
            .expect("the primary");
        sandbox.start_standby().await.expect("the standby");
        let primary = pool(&sandbox.url()).await;
        let standby = pool(&sandbox.standby_url().expect("a standby")).await;
        Self {
            sandbox,
            primary,
            standby,
        }
    }

    /// Closes the primary's pool and opens another, once every session of the old one has
    /// ended: a backend writes out its statistics before it leaves `pg_stat_activity`, so
    /// what the old sessions did is counted by then.
    pub async fn reconnect_primary(&mut self) {
        let before: chrono::DateTime<chrono::Utc> = sqlx::query_scalar("SELECT clock_timestamp()")
            .fetch_one(&self.primary)
            .await
            .expect("the clock");
        self.primary.close().await;
        self.primary = pool(&self.sandbox.url()).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let older: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND backend_type = 'client backend' AND backend_start <= $1",
            )
            .bind(before)
            .fetch_one(&self.primary)
            .await
            .expect("pg_stat_activity");
            if older == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{older} old sessions never ended"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops every process of the standby (SIGSTOP): a server that holds its connections
    /// and answers nothing, as a frozen host does. It runs again when the guard is dropped.
    pub fn freeze_standby(&mut self) -> Frozen {
        let postmaster = self.sandbox.standby_mut().expect("a standby").server_pid() as i32;
        let children = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                // Field 4 of /proc/PID/stat, after the parenthesised command name.
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|stat| {
                        let after = stat.rsplit_once(')')?.1.to_string();
                        after.split_whitespace().nth(1)?.parse::<i32>().ok()
                    })
                    == Some(postmaster)
            });
        let pids: Vec<i32> = std::iter::once(postmaster).chain(children).collect();
        let frozen = Frozen(pids);
        for pid in &frozen.0 {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGSTOP,
            )
            .expect("this test stops the standby's processes: run it as root or the server's user");
        }
        frozen
    }

    pub fn primary_url(&self) -> String {
        self.sandbox.url()
    }

    /// One URL listing both servers, primary first, as libpq takes several hosts.
    pub fn both_url(&self) -> String {
        let host = |url: String| {
            let (_, rest) = url.split_once('@').expect("a user");
            rest.split_once('/').expect("a database").0.to_string()
        };
        format!(
            "postgres://postgres@{},{}/sandbox",
            host(self.primary_url()),
            host(self.standby_url())
        )
    }

    /// The old primary, stopped by [`Self::fail_over`], started again without fencing: a
    /// second primary, on the old timeline. The test's pool on it is opened again.
    pub async fn restart_old_primary_unfenced(&mut self) {
        self.sandbox
            .cluster_mut()
            .start_server()
            .expect("the old primary, back without fencing");
        self.reconnect_primary().await;
    }

    /// Stops the primary (its data kept) and promotes the standby: a failover.
    pub async fn fail_over(&mut self) {
        self.sandbox
            .cluster_mut()
            .stop_server()
            .expect("stop the primary");
        let promoted: bool = sqlx::query_scalar("SELECT pg_promote()")
            .fetch_one(&self.standby)
            .await
            .expect("promote");
        assert!(promoted, "the standby was promoted");
    }

    pub fn standby_url(&self) -> String {
        self.sandbox.standby_url().expect("a standby")
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    pub async fn replayed(&self) {
        let target: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
            .fetch_one(&self.primary)
            .await
            .expect("primary position");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let done: bool = sqlx::query_scalar("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn")
                .bind(&target)
                .fetch_one(&self.standby)
                .await
                .expect("standby position");
            if done {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby never replayed {target}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn pause_replay(&self) {
        sqlx::query("SELECT pg_wal_replay_pause()")
            .execute(&self.standby)
            .await
            .expect("pause replay");
    }

    pub async fn resume_replay(&self) {
        sqlx::query("SELECT pg_wal_replay_resume()")
            .execute(&self.standby)
            .await
            .expect("resume replay");
    }

    /// The last statements of the console's own sessions on `pool`'s server.
    pub async fn console_statements(pool: &PgPool) -> Vec<String> {
        sqlx::query_scalar(
            "SELECT query FROM pg_stat_activity WHERE application_name = 'bootstrap-console'",
        )
        .fetch_all(pool)
        .await
        .expect("pg_stat_activity")
    }
}

impl Pair {
    /// The standby cancels a conflicting read as soon as replay needs to, instead of waiting
    /// for it (`max_standby_streaming_delay = 0`). The standby is restarted to take it: its
    /// startup process rereads the setting on a reload too, but nothing shows when it has,
    /// while a restarted one has it from the start. Returns once it streams again.
    pub async fn cancel_conflicts_at_once(&mut self) {
        sqlx::query("ALTER SYSTEM SET max_standby_streaming_delay = 0")
            .execute(&self.standby)
            .await
            .expect("alter system");
        self.standby.close().await;
        tokio::task::block_in_place(|| {
            let standby = self.sandbox.standby_mut().expect("a standby");
            standby.stop_server().expect("stop the standby");
            standby.start_server().expect("start the standby");
        });
        self.standby = pool(&self.sandbox.standby_url().expect("a standby")).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let delay: String = sqlx::query_scalar("SHOW max_standby_streaming_delay")
                .fetch_one(&self.standby)
                .await
                .expect("show");
            assert_eq!(delay, "0", "the setting survives the restart");
            let streaming: Option<String> =
                sqlx::query_scalar("SELECT status FROM pg_stat_wal_receiver")
                    .fetch_optional(&self.standby)
                    .await
                    .expect("pg_stat_wal_receiver");
            if streaming.as_deref() == Some("streaming") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the standby never streamed again"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The two servers' socket directories, standby first, as a host list (`a,b`), and the
    /// port they share.
    pub fn socket_dirs_standby_first(&self) -> (String, String) {
        let socket = |url: String| {
            let (_, rest) = url.split_once('@').expect("a user");
            let authority = rest
                .split_once('/')
                .expect("a database")
                .0
                .replace("%2F", "/");
            let (dir, port) = authority.rsplit_once(':').expect("a port");
            (dir.to_string(), port.to_string())
        };
        let (standby, port) = socket(self.standby_url());
        let (primary, _) = socket(self.primary_url());
        (format!("{standby},{primary}"), port)
    }

    /// How many statements the standby cancelled for lock conflicts with replay.
    pub async fn standby_lock_conflicts(&self) -> i64 {
        sqlx::query("SELECT pg_stat_clear_snapshot()")
            .execute(&self.standby)
            .await
            .expect("clear the stats snapshot");
        sqlx::query_scalar(
            "SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database()",
        )
        .fetch_one(&self.standby)
        .await
        .expect("conflict statistics")
    }

    /// How many more than `before` the standby counts, once the sessions that were cancelled
    /// have ended and flushed their statistics (waits up to 15 s for a first one).
    pub async fn settled_lock_conflicts(&self, before: i64) -> i64 {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let caused = self.standby_lock_conflicts().await - before;
            if caused > 0 || Instant::now() > deadline {
                return caused;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Processes stopped by [`Pair::freeze_standby`]; continued when dropped, a failed test's
/// included, so the standby can be stopped and deleted.
pub struct Frozen(Vec<i32>);

impl Drop for Frozen {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGCONT,
            );
        }
    }
}
