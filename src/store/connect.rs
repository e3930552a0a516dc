//! Where the console connects, and how it introduces itself there.
//!
//! The target comes from `--database-url`, else `DATABASE_URL`, else the standard libpq `PG*`
//! variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, …) and
//! `~/.pgpass`, the way PostgreSQL users expect. Every connection announces itself as
//! `application_name=bootstrap-console`, so a DBA finds it in `pg_stat_activity`, and sends
//! no other startup parameter, so PgBouncer's defaults accept it.
//!
//! TLS follows libpq's `sslmode` (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`)
//! with `sslrootcert` for a private CA, `sslcert`/`sslkey` for a client certificate; with
//! several hosts listed, each certificate is checked against that host's own name (see
//! [`super::hosts`]). Keyword/value strings are read too ([`super::conninfo`]); an unknown
//! keyword or URL parameter, `hostaddr`, or a port that is not a number is refused by name, and
//! errors never quote a password. A host that does not answer is reported after the 10 s
//! connect timeout; a refused connection, a missing socket or a failed login is said at once,
//! with how to name a database.
//!
//! A connection pooler in front of the database is fine in session and in transaction
//! pooling: every statement runs inside an explicit transaction that carries its own limits
//! (`statement_timeout`, `lock_timeout`, `idle_in_transaction_session_timeout`; see
//! [`super::db::TxKind`]), as an unnamed statement (see [`super::sql`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};

pub(crate) const APPLICATION_NAME: &str = "bootstrap-console";
/// The simulated platform's sessions, told apart from the console's in `pg_stat_activity`.
pub(crate) const SIMULATOR_APPLICATION_NAME: &str = "bootstrap-console-simulator";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A database to connect to: one host, or several (`postgres://a,b:5433/db`, or
/// `?host=a,b&port=5432,5433`, as libpq accepts) of which the primary is used. Its `Display`
/// never shows the password.
#[derive(Clone)]
pub struct Target {
    options: PgConnectOptions,
    /// Every host listed, in order (this one included); one entry for a single host.
    hosts: std::sync::Arc<Vec<PgConnectOptions>>,
    given: std::sync::Arc<Given>,
}

/// What the connection string and the environment gave, for the sentences of a failure.
#[derive(Debug, Default)]
struct Given {
    /// A password, in the URL or `PGPASSWORD` (a `.pgpass` entry is not counted).
    password: bool,
    /// The TLS files named (`sslrootcert`, `sslcert`, `sslkey`), as (keyword, path).
    files: Vec<(&'static str, String)>,
}

impl Given {
    /// From `url` (none: the environment alone).
    fn of(url: Option<&str>) -> Self {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let query = url
            .and_then(|url| url.split_once('?'))
            .map_or("", |(_, query)| query);
        let param = |names: &[&str]| {
            query
                .split('&')
                .filter_map(|pair| pair.split_once('='))
                .filter(|(key, _)| names.contains(&super::conninfo::decode(key).as_str()))
                .map(|(_, value)| super::conninfo::decode(value))
                .next_back()
        };
        // Only the files the connection will read are checked: none without TLS, and the root
        // certificate only where the server is verified (as libpq: `prefer` and `require`
        // encrypt without verifying).
        let sslmode = param(&["sslmode", "ssl-mode"])
            .or_else(|| env("PGSSLMODE"))
            .unwrap_or_else(|| "prefer".into());
        let reads = |keyword: &str| match sslmode.as_str() {
            // sqlx takes `allow` as `disable`: no TLS is tried.
            "disable" | "allow" => false,
            "verify-ca" | "verify-full" => true,
            _ => keyword != "sslrootcert",
        };
        let files = [
            (
                "sslrootcert",
                &["sslrootcert", "ssl-root-cert", "ssl-ca"][..],
                "PGSSLROOTCERT",
            ),
            ("sslcert", &["sslcert", "ssl-cert"][..], "PGSSLCERT"),
            ("sslkey", &["sslkey", "ssl-key"][..], "PGSSLKEY"),
        ]
        .into_iter()
        .filter(|(keyword, _, _)| reads(keyword))
        .filter_map(|(keyword, names, var)| {
            let path = param(names).or_else(|| env(var))?;
            // An inline PEM is not a file.
            (!path.starts_with("-----BEGIN")).then_some((keyword, path))
        })
        .collect();
        Self {
            password: env("PGPASSWORD").is_some()
                || url.is_some_and(|url| password_in(url).is_some_and(|p| !p.is_empty())),
            files,
        }
    }

    /// The first TLS file named that is not there.
    fn missing_file(&self) -> Option<ConnectError> {
        self.files
            .iter()
            .find(|(_, path)| !std::path::Path::new(path).exists())
            .map(|(keyword, path)| ConnectError::MissingFile {
                keyword,
                path: crate::text::clean(path, 200),
            })
    }
}

impl Target {
    /// From an explicit URL when there is one, otherwise from the `PG*` environment.
    pub fn from_url_or_env(url: Option<&str>) -> Result<Self, ConnectError> {
        let from_env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        // sqlx would send PGOPTIONS as the startup `options` — added to the URL's own
        // `options=`, not replaced by it — which a pooler refuses, and which could point the
        // console at other tables (`-c search_path=…`) unseen: said, never sent. `options=` in
        // the URL is the operator's explicit choice.
        if let Some(pgoptions) = from_env("PGOPTIONS") {
            return Err(ConnectError::BadUrl {
                what: "environment",
                reason: format!(
                    "PGOPTIONS is set ({:?}): the console sends no startup options from the \
                     environment (a connection pooler refuses them, and they could change \
                     what the console reads) — run it without (env -u PGOPTIONS …)",
                    crate::text::clean(&pgoptions, 80)
                ),
            });
        }
        let service = from_env("PGSERVICE").map(|name| {
            format!(
                "service='{}'",
                name.replace('\\', "\\\\").replace('\'', "\\'")
            )
        });
        let Some(given) = url
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .or(service.as_deref())
        else {
            // `PGHOST=a,b`: sqlx would take the list for one host name.
            return match super::conninfo::pghost_list_url(|name| std::env::var(name).ok()) {
                Some(url) => Self::from_url(&url, &url),
                None => Ok(Self::from_options(libpq_defaults(
                    PgConnectOptions::new(),
                    None,
                ))),
            };
        };
        if let Some((scheme, _)) = given.split_once("://")
            && !matches!(scheme, "postgres" | "postgresql")
            && !scheme.contains(['=', ' '])
        {
            return Err(ConnectError::BadUrl {
                what: "URL",
                reason: format!(
                    "{}:// is not PostgreSQL's scheme: write postgres:// or postgresql://",
                    crate::text::clean(scheme, 40)
                ),
            });
        }
        if super::conninfo::is_keyword_value(given) {
            let url = super::conninfo::to_url(given).map_err(|e| ConnectError::BadUrl {
                what: "connection string",
                reason: redact_reason(&e, given),
            })?;
            return Self::from_url(&url, given);
        }
        Self::from_url(given, given)
    }

    /// From `url`, which says what `given` (a URL, or a keyword/value string) says: errors
    /// quote `given`'s spelling, its password hidden.
    fn from_url(url: &str, given: &str) -> Result<Self, ConnectError> {
        let bad = |e: String| ConnectError::BadUrl {
            what: if super::conninfo::is_keyword_value(given) {
                "connection string"
            } else {
                "URL"
            },
            reason: redact_reason(&redact_reason(&e, url), given),
        };
        let url = &super::conninfo::with_url_service(url, |name| std::env::var(name).ok())
            .map_err(bad)?;
        super::conninfo::check_url_parameters(url).map_err(bad)?;
        let hosts = super::hosts::single_host_urls(url).map_err(bad)?;
        let options = hosts
            .iter()
            .map(|one| {
                PgConnectOptions::from_str(one)
                    .map(|options| libpq_defaults(options, Some(one)))
                    .map_err(|e| bad(e.to_string().replace("error with configuration: ", "")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            options: options[0].clone(),
            hosts: std::sync::Arc::new(options),
            given: std::sync::Arc::new(Given::of(Some(url))),
        })
    }

    pub fn from_options(options: PgConnectOptions) -> Self {
        Self {
            hosts: std::sync::Arc::new(vec![options.clone()]),
            options,
            given: std::sync::Arc::new(Given::of(None)),
        }
    }

    /// Each host listed, as a target of its own (itself alone for a single host).
    pub(crate) fn hosts(&self) -> Vec<Target> {
        self.hosts
            .iter()
            .map(|options| Self {
                options: options.clone(),
                hosts: self.hosts.clone(),
                given: self.given.clone(),
            })
            .collect()
    }

    /// `host:port`, a socket directory shown as the host: how a listed host is named to the
    /// operator and how `--primary` names one.
    pub(crate) fn address(&self) -> String {
        format!("{}:{}", self.host_name(), self.options.get_port())
    }

    /// The host, a socket directory shown as the host.
    fn host_name(&self) -> String {
        match self.options.get_socket() {
            Some(socket) => socket.display().to_string(),
            None => self.options.get_host().to_string(),
        }
    }

    /// The listed host `--primary` names (`host:port`, or the host alone when only one listed
    /// host has that name), as a target listing that host alone.
    pub(crate) fn only(&self, named: &str) -> Result<Target, String> {
        if named.trim().is_empty() {
            return Err("--primary needs a host: host:port, or the host alone".into());
        }
        let hosts = self.hosts();
        // A host listed twice is one host.
        let mut distinct: Vec<&Target> = Vec::new();
        for host in &hosts {
            if !distinct.iter().any(|d| d.address() == host.address()) {
                distinct.push(host);
            }
        }
        let exact: Vec<&Target> = distinct
            .iter()
            .copied()
            .filter(|h| h.address() == named)
            .collect();
        let by_name: Vec<&Target> = distinct
            .iter()
            .copied()
            .filter(|h| {
                h.address()
                    .rsplit_once(':')
                    .is_some_and(|(host, _)| host == named)
            })
            .collect();
        let found = match (exact.as_slice(), by_name.as_slice()) {
            ([one], _) | ([], [one]) => (*one).clone(),
            ([], []) => {
                return Err(format!(
                    "--primary {} is not a host the URL lists ({})",
                    crate::text::clean(named, 100),
                    distinct
                        .iter()
                        .map(|h| h.address())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            (_, several) => {
                return Err(format!(
                    "--primary {} names several listed hosts ({}): give host:port",
                    crate::text::clean(named, 100),
                    several
                        .iter()
                        .map(|h| h.address())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        Ok(Self {
            hosts: std::sync::Arc::new(vec![found.options.clone()]),
            ..found
        })
    }

    /// The user the connection logs in as.
    pub(crate) fn user(&self) -> &str {
        self.options.get_username()
    }

    /// Whether several hosts were listed (a failover is possible).
    pub(crate) fn has_alternates(&self) -> bool {
        self.hosts.len() > 1
    }

    /// The options every console session uses: it announces itself by name, and sends no
    /// other startup parameter a pooler would refuse (`extra_float_digits`, `options`). Its
    /// limits and read-only-ness come with each transaction instead ([`super::db::TxKind`]).
    pub fn options(&self) -> PgConnectOptions {
        self.options
            .clone()
            .application_name(APPLICATION_NAME)
            .extra_float_digits(None)
    }

    /// One connection (for `migrate` and other one-shot commands).
    pub async fn connect(&self) -> Result<PgConnection, ConnectError> {
        self.connect_with(self.options()).await
    }

    /// One connection, tried once: a refused connection or a missing socket is said at once,
    /// with its cause (a pool would retry it quietly until its timeout).
    async fn connect_with(&self, options: PgConnectOptions) -> Result<PgConnection, ConnectError> {
        if let Some(missing) = self.given.missing_file() {
            return Err(missing);
        }
        match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
            Ok(result) => result.map_err(|e| ConnectError::classify(self, e)),
            Err(_) => Err(ConnectError::Unreachable {
                target: self.to_string(),
                reason: format!(
                    "no answer within {}s{NAME_A_DATABASE}",
                    CONNECT_TIMEOUT.as_secs()
                ),
            }),
        }
    }

    /// A pool for the simulated platform (workers and writers): ordinary read-write sessions
    /// under their own application name.
    pub async fn simulator_pool(&self, max_connections: u32) -> Result<PgPool, ConnectError> {
        let options = self.options().application_name(SIMULATOR_APPLICATION_NAME);
        self.probe(options.clone()).await?;
        PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|e| ConnectError::classify(self, e))
    }

    /// A small pool of the console's sessions: each transaction on it opens through
    /// [`super::Db::begin`], read-only unless it is an action's.
    pub(crate) async fn pool(&self, max_connections: u32) -> Result<PgPool, ConnectError> {
        let options = self.options();
        self.probe(options.clone()).await?;
        PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|e| ConnectError::classify(self, e))
    }

    /// A pool that connects only when first used: for a standby that does not answer yet,
    /// asked again later.
    pub(crate) fn lazy_pool(&self, max_connections: u32) -> PgPool {
        PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(self.options())
    }

    /// Connects once before a pool is made, so that a database that is not there is said
    /// within a second, with its cause, instead of "pool timed out" after the pool's retries.
    async fn probe(&self, options: PgConnectOptions) -> Result<(), ConnectError> {
        let conn = self.connect_with(options).await?;
        let _ = conn.close().await;
        Ok(())
    }
}

/// Where libpq looks when no host is named: the Unix socket directory of the server package
/// (Debian's), else the upstream default.
fn default_socket_dir() -> &'static str {
    if std::path::Path::new("/var/run/postgresql").is_dir() {
        "/var/run/postgresql"
    } else {
        "/tmp"
    }
}

/// `options` (parsed from the single-host URL `url`, or from the environment alone) with
/// psql's defaults for what neither names: the local Unix socket rather than TCP to
/// `localhost`, and the operating system's user (whose name is also the database's, when none
/// is named). sqlx would try TCP when no socket file is there, as user "unknown" when its own
/// lookup fails.
fn libpq_defaults(mut options: PgConnectOptions, url: Option<&str>) -> PgConnectOptions {
    let env = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let named = |query_key: &str, in_authority: fn(&str, &str) -> bool| {
        url.is_some_and(|url| {
            let (before_query, query) = url.split_once('?').unwrap_or((url, ""));
            let rest = before_query.split_once("://").map_or("", |(_, rest)| rest);
            let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
            let (userinfo, host) = authority.rsplit_once('@').unwrap_or(("", authority));
            in_authority(userinfo, host)
                || query
                    .split('&')
                    .any(|pair| pair.split_once('=').is_some_and(|(k, _)| k == query_key))
        })
    };
    let host_named = env("PGHOST") || env("PGHOSTADDR") || named("host", |_, h| !h.is_empty());
    if !host_named && options.get_socket().is_none() {
        options = options.socket(default_socket_dir());
    }
    let user_named = env("PGUSER") || named("user", |u, _| !u.is_empty());
    if !user_named && let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::geteuid()) {
        options = options.username(&user.name);
        // sqlx looked the password file up for the user it had chosen: again, for this one.
        let password_given = env("PGPASSWORD") || url.and_then(password_in).is_some();
        if !password_given
            && let Some(entry @ super::pgpass::Entry { ignored: false, .. }) = super::pgpass::lookup(
                options.get_host(),
                options.get_port(),
                options.get_database().unwrap_or_default(),
                &user.name,
            )
        {
            options = options.password(&entry.password);
        }
    }
    options
}

/// Why a password without one given in the URL or `PGPASSWORD` was refused: the password file
/// gave the one refused, or had none for this connection.
fn password_file_hint(message: &str, options: &PgConnectOptions) -> String {
    let user = options.get_username();
    // Keyed as sqlx keys it: a connection naming no database looks up "".
    let (host, port, database) = (
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or_default(),
    );
    let line = crate::text::clean(&format!("{host}:{port}:{database}:{user}"), 200);
    match super::pgpass::lookup(host, port, database, user) {
        Some(entry) if entry.ignored => format!(
            "{message} — no password was given: {} has an entry for {line}, but it is not used \
             while others may read it (chmod 600 it)",
            entry.file.display()
        ),
        Some(entry) => format!(
            "{message} — the password came from {} (its entry for {line}): is it current?",
            entry.file.display()
        ),
        None => format!(
            "{message} — no password was given: the console takes it from the URL, PGPASSWORD \
             or ~/.pgpass (PGPASSFILE), and no password file has an entry for {line}"
        ),
    }
}

impl fmt::Display for Target {
    /// `user@host:port/database`, with a socket directory shown as the host.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        let database = o.get_database().unwrap_or(o.get_username());
        write!(f, "{}@{}/{}", o.get_username(), self.address(), database)
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({self})")
    }
}

/// Why the console could not reach the database, as one sentence for the operator.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("the database {what} is not valid: {reason}")]
    BadUrl {
        /// "URL", "connection string" for a keyword/value one, or "environment" (`PG*`).
        what: &'static str,
        reason: String,
    },
    #[error("cannot reach the database at {target}: {reason}")]
    Unreachable { target: String, reason: String },
    #[error("the database at {target} refused the login: {reason}")]
    Login { target: String, reason: String },
    #[error("the database at {target} does not exist")]
    NoSuchDatabase { target: String },
    /// A TLS file the connection names is not there (known before connecting).
    #[error(
        "the {keyword} file {path} does not exist (named by the connection string or \
         PG{})",
        keyword.to_uppercase()
    )]
    MissingFile { keyword: &'static str, path: String },
    /// A connection pooler in front of the database refused, not the database itself.
    #[error("the connection pooler at {target} refused the connection: {reason}")]
    Pooler { target: String, reason: String },
}

impl ConnectError {
    /// The same failure, said of the standby named by `--read-url`.
    pub(crate) fn for_read_url(self) -> Self {
        let named = |target: String| format!("{target} (the standby named by --read-url)");
        match self {
            Self::Unreachable { target, reason } => Self::Unreachable {
                target: named(target),
                reason: reason.replace(
                    NAME_A_DATABASE,
                    " — check --read-url (or BOOTSTRAP_CONSOLE_READ_URL)",
                ),
            },
            Self::Login { target, reason } => Self::Login {
                target: named(target),
                reason,
            },
            Self::NoSuchDatabase { target } => Self::NoSuchDatabase {
                target: named(target),
            },
            Self::Pooler { target, reason } => Self::Pooler {
                target: named(target),
                reason,
            },
            bad @ (Self::BadUrl { .. } | Self::MissingFile { .. }) => bad,
        }
    }

    /// Nothing answered there (as opposed to a refused login or a missing database).
    pub(crate) fn is_unreachable(&self) -> bool {
        matches!(self, Self::Unreachable { .. })
    }

    /// A failure that may mend by waiting: nothing answered, or the pooler could not serve the
    /// connection for now (see [`pooler_may_mend`]).
    pub(crate) fn may_mend(&self) -> bool {
        match self {
            Self::Unreachable { .. } => true,
            Self::Pooler { reason, .. } => pooler_may_mend(reason),
            _ => false,
        }
    }

    pub(super) fn classify(target: &Target, error: sqlx::Error) -> Self {
        let target_text = target.to_string();
        if let sqlx::Error::Database(db) = &error {
            if let Some(said) = pooler_said(db.as_ref()) {
                return Self::Pooler {
                    target: target_text,
                    reason: said,
                };
            }
            let code = db.code().unwrap_or_default();
            return match code.as_ref() {
                "3D000" => Self::NoSuchDatabase {
                    target: target_text,
                },
                // invalid_password: without a password given, say where one comes from.
                "28P01" if !target.given.password => Self::Login {
                    target: target_text,
                    reason: password_file_hint(db.message(), &target.options),
                },
                // invalid_password, invalid_authorization_specification, insufficient_privilege
                "28P01" | "28000" | "42501" => Self::Login {
                    target: target_text,
                    reason: db.message().to_string(),
                },
                _ => Self::Unreachable {
                    target: target_text,
                    reason: db.message().to_string(),
                },
            };
        }
        if let Some(said) = not_postgresql(&error) {
            return Self::Unreachable {
                target: target_text,
                reason: format!(
                    "something answers there, but not PostgreSQL (it does not speak the \
                     PostgreSQL protocol: {}){NAME_A_DATABASE}",
                    crate::text::clean(&said, 80)
                ),
            };
        }
        Self::Unreachable {
            target: target_text,
            reason: cause(&error),
        }
    }
}

/// What sqlx said when the answer at a host was not PostgreSQL's: a reply to the TLS request
/// that is neither yes nor no, or a message whose length no PostgreSQL message has (a web
/// server's `HTTP/1.1 …` read as a PostgreSQL message). `None` for other failures.
fn not_postgresql(error: &sqlx::Error) -> Option<String> {
    match error {
        // Only the answers no PostgreSQL gives: its authentication failures are protocol
        // errors too, and a real server.
        sqlx::Error::Protocol(said)
            if said.starts_with("unexpected response from SSLRequest")
                || said.contains("unexpected message") =>
        {
            Some(said.split(" (").next().unwrap_or(said).to_string())
        }
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            let said = io.to_string();
            let claimed: u64 = said
                .strip_prefix("expected to read ")?
                .split(' ')
                .next()?
                .parse()
                .ok()?;
            // A message header that claims a gigabyte is not a message.
            (claimed > 1 << 24).then(|| "the answer is not a PostgreSQL message".to_string())
        }
        _ => None,
    }
}

/// What went wrong underneath, in words: the operating system's answer for the common cases,
/// with how to name another database when nothing answered at all.
fn cause(error: &sqlx::Error) -> String {
    let io = match error {
        sqlx::Error::Io(io) => Some(io),
        _ => None,
    };
    match io.and_then(nothing_there) {
        Some(nothing_there) => format!("{nothing_there}{NAME_A_DATABASE}"),
        None => error.to_string(),
    }
}

/// A connection that found nothing there, in words (`None` for other I/O failures).
pub(crate) fn nothing_there(io: &std::io::Error) -> Option<&'static str> {
    match io.kind() {
        std::io::ErrorKind::ConnectionRefused => Some("connection refused (nothing listens there)"),
        std::io::ErrorKind::NotFound => Some("no such socket (is a server running on this host?)"),
        std::io::ErrorKind::TimedOut => Some("the connection timed out"),
        _ => None,
    }
}

/// What a connection pooler in front of the database said, when the error is the pooler's and
/// not the database's; `None` for the database's own errors. PostgreSQL's errors always name
/// the source file and routine that raised them; a pooler's (PgBouncer's) carry only a
/// severity, a code and a message.
pub(crate) fn pooler_said(error: &dyn sqlx::error::DatabaseError) -> Option<String> {
    let pg = error.try_downcast_ref::<sqlx::postgres::PgDatabaseError>()?;
    if pg.file().is_some() || pg.routine().is_some() {
        return None;
    }
    let message = crate::text::clean(pg.message(), 200);
    let why = if message.contains("server conn crashed") {
        " — it lost its server connection, which is how it reports a transaction the server \
         ended (idle_in_transaction_session_timeout, or a terminated backend)"
    } else if message.contains("authentication failed") {
        " — the pooler checks logins itself: its auth_file or auth_query must know the user"
    } else if message.contains("unsupported startup parameter") {
        " — add it to the pooler's ignore_startup_parameters, or connect without it"
    } else {
        ""
    };
    Some(format!("{message}{why}"))
}

/// Whether what a pooler said may mend by waiting: a lost or unavailable server connection, a
/// full pool, a pause or a restart do; a refused login, a startup parameter it does not
/// take or a database it does not know do not.
pub(crate) fn pooler_may_mend(said: &str) -> bool {
    const LASTING: [&str; 6] = [
        "authentication failed",
        "unsupported startup parameter",
        "no such database",
        "no such user",
        "permission denied",
        "not allowed",
    ];
    !LASTING.iter().any(|lasting| said.contains(lasting))
}

/// Said when no database answered: where the console looks for one.
const NAME_A_DATABASE: &str = " — name the database with --database-url, DATABASE_URL or the \
     PG* variables; `bootstrap-console demo` needs none";

/// Parser errors may quote the URL; never echo its password.
fn redact_reason(reason: &str, url: &str) -> String {
    match password_in(url) {
        Some(password) if !password.is_empty() => reason.replace(&password, "***"),
        _ => reason.to_string(),
    }
}

/// The password `url` carries: in its user info, in a `password=` parameter, or as a
/// keyword/value string's.
fn password_in(url: &str) -> Option<String> {
    if super::conninfo::is_keyword_value(url) {
        return super::conninfo::password(url);
    }
    let rest = url.split_once("://")?.1;
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = before_query.split('/').next().unwrap_or_default();
    if let Some((userinfo, _)) = authority.rsplit_once('@')
        && let Some((_, password)) = userinfo.split_once(':')
    {
        return Some(password.to_string());
    }
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("password="))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_shown_without_its_password() {
        let target =
            Target::from_url_or_env(Some("postgres://ops:s3cret@db.internal:6432/platform"))
                .expect("valid");
        let shown = target.to_string();
        assert_eq!(shown, "ops@db.internal:6432/platform");
        assert!(!format!("{target:?}").contains("s3cret"));
    }

    #[test]
    fn a_socket_directory_is_shown_as_the_host() {
        let target =
            Target::from_url_or_env(Some("postgres://postgres@%2Ftmp%2Fbc-pg-x:5432/sandbox"))
                .expect("valid");
        assert_eq!(target.to_string(), "postgres@/tmp/bc-pg-x:5432/sandbox");
    }

    #[test]
    fn a_malformed_url_is_a_sentence_without_the_password() {
        let error = Target::from_url_or_env(Some("postgres://ops:s3cret@db:notaport/x"))
            .expect_err("invalid");
        let text = error.to_string();
        assert!(text.starts_with("the database URL is not valid"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn a_keyword_value_string_names_its_hosts_and_hides_its_password() {
        let target = Target::from_url_or_env(Some(
            "host=db-a.internal,db-b.internal port=5432,5433 dbname=platform user=ops \
             password='s3 cret' sslmode=verify-full",
        ))
        .expect("valid");
        let hosts: Vec<String> = target.hosts().iter().map(ToString::to_string).collect();
        assert_eq!(
            hosts,
            [
                "ops@db-a.internal:5432/platform",
                "ops@db-b.internal:5433/platform"
            ]
        );
        assert!(!format!("{target:?}").contains("s3 cret"));
        let error = Target::from_url_or_env(Some("host=db password='s3cret' sslmode=sometimes"))
            .expect_err("invalid");
        let text = error.to_string();
        assert!(
            text.starts_with("the database connection string is not valid"),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }

    #[test]
    fn each_listed_host_is_its_own_target_with_its_own_name_for_tls() {
        let target = Target::from_url_or_env(Some(
            "postgres://ops:s3cret@db-a.internal:5432,db-b.internal:5433/platform?sslmode=verify-full",
        ))
        .expect("valid");
        assert!(target.has_alternates());
        let hosts = target.hosts();
        let seen: Vec<(String, u16)> = hosts
            .iter()
            .map(|h| (h.options.get_host().to_string(), h.options.get_port()))
            .collect();
        assert_eq!(
            seen,
            [
                ("db-a.internal".into(), 5432),
                ("db-b.internal".into(), 5433)
            ]
        );
        // Certificates are checked against each host's own name, with the URL's mode.
        for host in &hosts {
            assert!(matches!(
                host.options.get_ssl_mode(),
                sqlx::postgres::PgSslMode::VerifyFull
            ));
            assert!(!host.has_alternates() || host.hosts().len() == 2);
        }
        assert_eq!(hosts[1].to_string(), "ops@db-b.internal:5433/platform");
    }

    #[test]
    fn a_pooler_that_cannot_serve_now_may_mend_one_that_refuses_the_login_will_not() {
        use super::pooler_may_mend;
        for mends in [
            "server conn crashed?",
            "pgbouncer cannot connect to server",
            "query_wait_timeout",
            "no more connections allowed (max_client_conn)",
            "pgbouncer shutting down",
        ] {
            assert!(pooler_may_mend(mends), "{mends}");
        }
        for lasting in [
            "password authentication failed for user \"ops\"",
            "unsupported startup parameter: options",
            "no such database: platform",
        ] {
            assert!(!pooler_may_mend(lasting), "{lasting}");
        }
    }

    #[test]
    fn the_session_identifies_itself() {
        let target = Target::from_url_or_env(Some("postgres://a@b/c")).expect("valid");
        let options = target.options();
        assert_eq!(options.get_application_name(), Some(APPLICATION_NAME));
        // Nothing a pooler would refuse at startup.
        assert_eq!(options.get_options(), None);
    }
}
