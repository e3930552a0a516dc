//! The laboratory: a private PostgreSQL that loads `pg_stat_statements`, the scale fixture,
//! and one login role per measured client, so the database's own accounting tells their
//! costs apart.

use std::time::{Duration, Instant};

use bootstrap_console::sandbox::fixture::{self, FixtureConfig};
use bootstrap_console::sandbox::{PrivateCluster, ServerBinaries};
use bootstrap_console::store::connect::Target;
use sqlx::postgres::PgPoolOptions;
use sqlx::{ConnectOptions, PgPool};

pub const DATABASE: &str = "fleet";

pub struct Lab {
    pub cluster: PrivateCluster,
    pub admin: PgPool,
}

/// Planning plus execution time of one role's statements, and how many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DbTime {
    pub millis: f64,
    pub calls: i64,
}

impl std::ops::Sub for DbTime {
    type Output = DbTime;
    fn sub(self, before: DbTime) -> DbTime {
        DbTime {
            millis: self.millis - before.millis,
            calls: self.calls - before.calls,
        }
    }
}

impl Lab {
    /// Starts the cluster and builds the fixture (this takes a minute or two at 100,000).
    pub async fn start(config: &FixtureConfig) -> Lab {
        let binaries = ServerBinaries::locate().expect("PostgreSQL server binaries");
        let cluster = tokio::task::spawn_blocking(move || {
            PrivateCluster::start_configured(
                &binaries,
                &[
                    ("shared_preload_libraries", "pg_stat_statements"),
                    ("pg_stat_statements.track_planning", "on"),
                    ("pg_stat_statements.max", "10000"),
                    ("shared_buffers", "512MB"),
                ],
            )
        })
        .await
        .expect("join")
        .expect("a private PostgreSQL with pg_stat_statements");
        let mut maintenance = cluster
            .connect_options("postgres")
            .connect()
            .await
            .expect("connect");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {DATABASE}")))
            .execute(&mut maintenance)
            .await
            .expect("create the database");
        let mut conn = cluster
            .connect_options(DATABASE)
            .connect()
            .await
            .expect("connect");
        sqlx::raw_sql("CREATE EXTENSION pg_stat_statements; SET statement_timeout = 0;")
            .execute(&mut conn)
            .await
            .expect("pg_stat_statements");
        bootstrap_console::store::schema::apply_unit(
            &mut conn,
            &bootstrap_console::store::schema::PLATFORM_STANDIN,
        )
        .await
        .expect("platform stand-in");
        let started = Instant::now();
        let report = fixture::build(&mut conn, config, |step, took| {
            println!("  fixture: {step} ({:.1} s)", took.as_secs_f64());
        })
        .await
        .expect("the scale fixture");
        println!(
            "  fixture: {} spaces, {} items, {} leases, {:.1} GB, built in {:.0} s",
            report.spaces,
            report.items,
            report.leases,
            report.database_bytes as f64 / 1e9,
            started.elapsed().as_secs_f64()
        );
        let admin = PgPoolOptions::new()
            .max_connections(4)
            .connect_with(cluster.connect_options(DATABASE))
            .await
            .expect("admin pool");
        Lab { cluster, admin }
    }

    /// Creates `role` (a superuser: grants are not what is measured here).
    pub async fn role(&self, role: &str) {
        let sql = format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN \
               CREATE ROLE {role} LOGIN SUPERUSER; END IF; END $$"
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&self.admin)
            .await
            .expect("create a role");
    }

    /// The fixture database as `role`.
    pub fn target(&self, role: &str) -> Target {
        Target::from_options(self.cluster.connect_options(DATABASE).username(role))
    }

    /// A URL of the fixture database as `role`, for the binary and psql.
    pub fn url(&self, role: &str) -> String {
        self.cluster
            .url(DATABASE)
            .replacen("postgres@", &format!("{role}@"), 1)
    }

    /// Everything `role` has cost the database so far.
    pub async fn db_time(&self, role: &str) -> DbTime {
        let (millis, calls): (Option<f64>, Option<i64>) = sqlx::query_as(
            "SELECT sum(s.total_plan_time + s.total_exec_time), sum(s.calls)::bigint \
             FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid \
             WHERE r.rolname = $1",
        )
        .bind(role)
        .fetch_one(&self.admin)
        .await
        .expect("pg_stat_statements");
        DbTime {
            millis: millis.unwrap_or(0.0),
            calls: calls.unwrap_or(0),
        }
    }

    /// `role`'s database time during `window` of running `work`.
    pub async fn cost_of<F: std::future::Future<Output = T>, T>(
        &self,
        role: &str,
        work: F,
    ) -> (DbTime, T, Duration) {
        let before = self.db_time(role).await;
        let started = Instant::now();
        let out = work.await;
        let took = started.elapsed();
        (self.db_time(role).await - before, out, took)
    }
}
