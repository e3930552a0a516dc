//! Test harness: every test gets its own freshly migrated database.
//!
//! The server is the one `DATABASE_URL` names when it is set; otherwise one private cluster per
//! test binary, started on first use and stopped when the binary exits. Migrated databases are
//! cloned from a template (`CREATE DATABASE … TEMPLATE`), which is much faster than migrating
//! each one; the template's name carries a hash of the schema, so a changed schema gets a new
//! template and parallel test binaries never build one twice (an advisory lock serialises it).
#![allow(dead_code)]

pub mod cli;
pub mod fixture;
pub mod pty;
pub mod replica;
pub mod screens;
pub mod svg;

use std::str::FromStr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bootstrap_console::sandbox::{KeptCluster, PoolerConfig, PrivateCluster, PrivatePooler};
use bootstrap_console::store::schema;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};

/// The server this test binary uses.
struct Server {
    admin: PgConnectOptions,
    /// A URL of the server, with `{db}` where the database name goes.
    url_template: String,
    /// Keeps the private cluster (if any) referenced for diagnostics.
    _cluster: Option<KeptCluster>,
}

static SERVER: OnceLock<Server> = OnceLock::new();
static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The advisory lock key that serialises template builds across test binaries.
const TEMPLATE_LOCK: i64 = 0x0b00_7c0f_5e11;

fn server() -> &'static Server {
    SERVER.get_or_init(|| match std::env::var("DATABASE_URL") {
        Ok(url) if !url.trim().is_empty() => Server {
            admin: PgConnectOptions::from_str(&url).expect("DATABASE_URL is not a valid URL"),
            url_template: url_template(&url),
            _cluster: None,
        },
        _ => {
            let cluster = PrivateCluster::start()
                .expect("start the private PostgreSQL for this test binary")
                .keep_until_exit();
            Server {
                admin: cluster.connect_options("postgres"),
                url_template: cluster.url("{db}"),
                _cluster: Some(cluster),
            }
        }
    })
}

/// `postgres://user@host:port/name?query` → the same with `{db}` as the name.
fn url_template(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_end..]
        .find('/')
        .map_or(base.len(), |i| authority_end + i);
    format!("{}/{{db}}{query}", &base[..path_start])
}

/// The connection options of the server's maintenance database.
pub fn admin_options() -> PgConnectOptions {
    server().admin.clone()
}

/// A database that exists for one test and is dropped with this value.
pub struct TestDb {
    pub name: String,
    pub pool: PgPool,
    options: PgConnectOptions,
    /// The server's maintenance database (to drop this one) and its URL with `{db}`.
    admin: PgConnectOptions,
    url_template: String,
}

/// A test's own private cluster (for a test that reads what is cluster-wide: its log), with
/// the migrated databases it makes.
pub struct OwnCluster {
    cluster: PrivateCluster,
}

/// A private cluster that checks passwords (scram) for every role but `postgres`, with role
/// `ops` whose password is `right-one`.
pub async fn password_cluster() -> PrivateCluster {
    let cluster = tokio::task::spawn_blocking(PrivateCluster::start)
        .await
        .expect("join")
        .expect("a cluster that checks passwords");
    let mut admin = cluster
        .connect_options("postgres")
        .connect()
        .await
        .expect("admin");
    sqlx::raw_sql("CREATE ROLE ops LOGIN PASSWORD 'right-one'")
        .execute(&mut admin)
        .await
        .expect("role");
    std::fs::write(
        cluster.socket_dir().join("data/pg_hba.conf"),
        "local all postgres trust\nlocal all all scram-sha-256\n",
    )
    .expect("pg_hba");
    sqlx::raw_sql("SELECT pg_reload_conf()")
        .execute(&mut admin)
        .await
        .expect("reload");
    let _ = admin.close().await;
    // The reload is asynchronous: wait until the server checks passwords.
    let wrong = cluster
        .connect_options("postgres")
        .username("ops")
        .password("wrong");
    until("the server checks passwords", 30, || async {
        match wrong.connect().await {
            Ok(conn) => {
                let _ = conn.close().await;
                false
            }
            Err(_) => true,
        }
    })
    .await;
    cluster
}

impl OwnCluster {
    pub async fn start() -> Self {
        let cluster = tokio::task::spawn_blocking(PrivateCluster::start)
            .await
            .expect("join")
            .expect("a private cluster of the test's own");
        Self { cluster }
    }

    /// A database on it with the full sandbox schema.
    pub async fn migrated(&self) -> TestDb {
        let db = self.empty().await;
        let mut conn = db.connect().await;
        schema::apply_sandbox_schema(&mut conn)
            .await
            .expect("migrate");
        let _ = conn.close().await;
        db
    }

    /// A database on it with no tables at all.
    pub async fn empty(&self) -> TestDb {
        let admin = self.cluster.connect_options("postgres");
        TestDb::create_on(admin, self.cluster.url("{db}"), "template0").await
    }

    /// Its server log.
    pub fn log(&self) -> std::path::PathBuf {
        self.cluster.socket_dir().join("server.log")
    }
}

impl TestDb {
    /// A database with the full sandbox schema (platform stand-in, 0009, console schema).
    pub async fn migrated() -> Self {
        let template = TEMPLATE
            .get_or_init(build_template)
            .await
            .as_str()
            .to_string();
        Self::create_from(&template).await
    }

    /// A database with no tables at all.
    pub async fn empty() -> Self {
        Self::create_from("template0").await
    }

    async fn create_from(template: &str) -> Self {
        let server = server();
        Self::create_on(server.admin.clone(), server.url_template.clone(), template).await
    }

    /// A database with the platform's tables (the stand-in and 0009) and no console schema,
    /// as a platform database is before `migrate`.
    pub async fn platform_only() -> Self {
        let db = Self::empty().await;
        let mut conn = db.connect().await;
        for unit in [&schema::PLATFORM_STANDIN, &schema::LEGACY_SPACE_BOOTSTRAP] {
            schema::apply_unit(&mut conn, unit)
                .await
                .expect("a platform unit");
        }
        let _ = conn.close().await;
        db
    }

    /// Options for connecting to this database.
    pub fn options(&self) -> PgConnectOptions {
        self.options.clone()
    }

    /// A `postgres://` URL of this database, for running the binary against it.
    pub fn url(&self) -> String {
        self.url_template.replace("{db}", &self.name)
    }

    /// [`Self::url`] for logging in as `role` with password `pw`.
    pub fn url_as(&self, role: &str) -> String {
        let url = self.url();
        let (scheme, rest) = url.split_once("://").expect("a URL");
        let host = rest.split_once('@').map_or(rest, |(_, host)| host);
        format!("{scheme}://{role}:pw@{host}")
    }

    /// A private PgBouncer in front of this test's server, accepting `users`.
    pub async fn pooler(&self, config: PoolerConfig) -> PrivatePooler {
        let host = match self.options.get_socket() {
            Some(dir) => dir.to_string_lossy().into_owned(),
            None => self.options.get_host().to_string(),
        };
        let port = self.options.get_port();
        tokio::task::spawn_blocking(move || PrivatePooler::start(&host, port, &config))
            .await
            .expect("join")
            .expect("a private PgBouncer")
    }

    /// A URL of this database through `pooler`, as `user`.
    pub fn url_through(&self, pooler: &PrivatePooler, user: &str) -> String {
        pooler.url(user, &self.name)
    }

    /// The database as a console connection target.
    pub fn target(&self) -> bootstrap_console::store::connect::Target {
        bootstrap_console::store::connect::Target::from_options(self.options())
    }

    /// A console session on this database.
    pub async fn session(
        &self,
        options: bootstrap_console::domain::session::SessionOptions,
    ) -> bootstrap_console::domain::session::Session {
        bootstrap_console::domain::session::Session::open(&self.target(), options)
            .await
            .expect("open a console session")
    }

    /// A new pool, whose sessions pick up database-level settings changed since `pool` opened.
    pub async fn fresh_pool(&self) -> PgPool {
        PgPoolOptions::new()
            .max_connections(4)
            .connect_with(self.options())
            .await
            .expect("connect to the test database")
    }

    /// A single new connection, for tests that need a second session.
    pub async fn connect(&self) -> PgConnection {
        self.options
            .connect()
            .await
            .expect("connect to the test database")
    }

    async fn create_on(admin: PgConnectOptions, url_template: String, template: &str) -> Self {
        let name = format!(
            "bc_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn = admin
            .connect()
            .await
            .expect("connect to the test server's maintenance database");
        create_database(&mut conn, &name, template).await;
        let _ = conn.close().await;
        let options = admin.clone().database(&name);
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.clone())
            .await
            .expect("connect to the test database");
        Self {
            name,
            pool,
            options,
            admin,
            url_template,
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, where blocking on async work is not allowed:
        // a short-lived thread with its own runtime drops the database.
        let name = self.name.clone();
        let admin = self.admin.clone();
        let dropper = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime for dropping the test database");
            runtime.block_on(async {
                if let Ok(mut admin) = admin.connect().await {
                    let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                        .execute(&mut admin)
                        .await;
                }
            });
        });
        let _ = dropper.join();
    }
}

async fn connect_admin() -> PgConnection {
    admin_options()
        .connect()
        .await
        .expect("connect to the test server's maintenance database")
}

/// `CREATE DATABASE`, retrying while another session briefly holds the template.
async fn create_database(admin: &mut PgConnection, name: &str, template: &str) {
    let sql = format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\"");
    for _ in 0..100 {
        match sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
            .execute(&mut *admin)
            .await
        {
            Ok(_) => return,
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("55006") => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("create test database {name}: {e}"),
        }
    }
    panic!("create test database {name}: the template stayed busy");
}

/// Builds (once per server and schema) the migrated template and returns its name.
async fn build_template() -> String {
    let name = format!("bc_template_{:016x}", schema_fingerprint());
    let mut admin = connect_admin().await;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(TEMPLATE_LOCK)
        .execute(&mut admin)
        .await
        .expect("take the template lock");
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(&mut admin)
            .await
            .expect("look for the template");
    if !exists {
        let staging = format!("{name}_building");
        let drop = format!("DROP DATABASE IF EXISTS \"{staging}\" WITH (FORCE)");
        sqlx::raw_sql(sqlx::AssertSqlSafe(drop))
            .execute(&mut admin)
            .await
            .expect("drop a half-built template");
        create_database(&mut admin, &staging, "template0").await;
        let mut conn = admin_options()
            .database(&staging)
            .connect()
            .await
            .expect("connect to the template");
        schema::apply_sandbox_schema(&mut conn)
            .await
            .expect("migrate the template");
        conn.close().await.expect("close the template connection");
        let rename = format!("ALTER DATABASE \"{staging}\" RENAME TO \"{name}\"");
        sqlx::raw_sql(sqlx::AssertSqlSafe(rename))
            .execute(&mut admin)
            .await
            .expect("publish the template");
    }
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(TEMPLATE_LOCK)
        .execute(&mut admin)
        .await
        .expect("release the template lock");
    name
}

/// FNV-1a over every schema unit: stable across builds, changes when any SQL changes.
fn schema_fingerprint() -> u64 {
    let units = [schema::PLATFORM_STANDIN, schema::LEGACY_SPACE_BOOTSTRAP]
        .into_iter()
        .chain(schema::CONSOLE_UNITS.iter().copied());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for unit in units {
        for byte in unit.sql.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// Polls `check` every 100 ms until it holds, for at most `secs` seconds: tests wait for a
/// condition, never for a length of time.
pub async fn until<F, Fut>(what: &str, secs: u64, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The job's completed documents, as committed.
pub async fn completed_documents(pool: &PgPool, bootstrap: uuid::Uuid) -> i32 {
    sqlx::query_scalar(
        "SELECT completed_documents FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(bootstrap)
    .fetch_one(pool)
    .await
    .expect("completed documents")
}
