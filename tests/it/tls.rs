//! TLS with every listed host verified on its own, with real handshakes: a private PostgreSQL
//! listening on 127.0.0.1 with a certificate issued to `localhost` only, by a CA made for the
//! test. Under `sslmode=verify-full`, the same server named `localhost` is trusted and named
//! `127.0.0.1` is not; a URL listing both uses the one that verifies.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bootstrap_console::sandbox::{PrivateCluster, ServerBinaries};
use bootstrap_console::store::connect::Target;
use bootstrap_console::store::db::TxKind;
use bootstrap_console::store::{Db, Wanted};
use sqlx::ConnectOptions;
use sqlx::postgres::PgConnectOptions;

struct TlsServer {
    cluster: PrivateCluster,
    port: u16,
    ca: PathBuf,
}

impl TlsServer {
    /// A URL naming `hosts` (`host` or `a,b`) on the server's port, verified as `sslmode` asks.
    fn url(&self, hosts: &str, sslmode: &str) -> String {
        let listed: Vec<String> = hosts
            .split(',')
            .map(|host| format!("{host}:{}", self.port))
            .collect();
        format!(
            "postgres://postgres@{}/postgres?sslmode={sslmode}&sslrootcert={}",
            listed.join(","),
            self.ca.display()
        )
    }
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// Writes `text` as a file the server's account owns, readable by it alone.
fn write_owned(path: &Path, text: &str, owner: &std::fs::Metadata) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::chown(path, Some(owner.uid()), Some(owner.gid())).expect("chown");
}

async fn start() -> TlsServer {
    let port = free_port();
    let binaries = ServerBinaries::locate().expect("PostgreSQL server binaries");
    let settings_port = port.to_string();
    let cluster = tokio::task::spawn_blocking(move || {
        PrivateCluster::start_configured(
            &binaries,
            &[
                ("listen_addresses", "127.0.0.1"),
                ("port", settings_port.as_str()),
            ],
        )
    })
    .await
    .expect("join")
    .expect("a private PostgreSQL on 127.0.0.1");

    // A CA of the test's own, and a server certificate for `localhost` only.
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "bootstrap-console test CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let server_key = rcgen::KeyPair::generate().expect("server key");
    let server = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("server params")
        .signed_by(&server_key, &ca, &ca_key)
        .expect("server certificate");

    let dir = cluster.socket_dir().to_path_buf();
    let owner = std::fs::metadata(dir.join("data")).expect("the data directory");
    write_owned(&dir.join("server.crt"), &server.pem(), &owner);
    write_owned(&dir.join("server.key"), &server_key.serialize_pem(), &owner);
    let ca_path = dir.join("ca.pem");
    std::fs::write(&ca_path, ca.pem()).expect("write the CA");

    // TLS is turned on by a reload; new sessions then offer it.
    let admin = PgConnectOptions::new()
        .socket(&dir)
        .port(port)
        .username("postgres")
        .database("postgres");
    let mut conn = admin.connect().await.expect("connect over the socket");
    for setting in [
        format!(
            "ALTER SYSTEM SET ssl_cert_file = '{}'",
            dir.join("server.crt").display()
        ),
        format!(
            "ALTER SYSTEM SET ssl_key_file = '{}'",
            dir.join("server.key").display()
        ),
        "ALTER SYSTEM SET ssl = on".to_string(),
        "SELECT pg_reload_conf()".to_string(),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(setting))
            .execute(&mut conn)
            .await
            .expect("configure TLS");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut fresh = admin.connect().await.expect("connect");
        let ssl: String = sqlx::query_scalar("SHOW ssl")
            .fetch_one(&mut fresh)
            .await
            .expect("show ssl");
        if ssl == "on" {
            break;
        }
        assert!(Instant::now() < deadline, "TLS never came on");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    TlsServer {
        cluster,
        port,
        ca: ca_path,
    }
}

/// Whether the session the store opened is encrypted, as the server sees it.
async fn encrypted(store: &Db) -> bool {
    let mut tx = store.begin(TxKind::Read).await.expect("a transaction");
    let ssl = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&mut *tx)
        .await
        .expect("pg_stat_ssl");
    tx.commit().await.expect("commit");
    ssl
}

#[tokio::test(flavor = "multi_thread")]
async fn each_listed_host_is_verified_under_its_own_name() {
    let server = start().await;
    let connect = |url: String| async move {
        let target = Target::from_url_or_env(Some(&url)).expect("a valid URL");
        bootstrap_console::store::connect(&target, Wanted::Primary)
            .await
            .map(|opened| (opened.db, opened.capabilities))
    };

    // The certificate names localhost: verified, encrypted.
    let (store, _) = connect(server.url("localhost", "verify-full"))
        .await
        .expect("localhost verifies");
    assert!(encrypted(&store).await);
    store.close().await;

    // The same server by its address is not the name on the certificate.
    let error = connect(server.url("127.0.0.1", "verify-full"))
        .await
        .err()
        .expect("127.0.0.1 is not on the certificate");
    let sentence = error.to_string();
    assert!(
        sentence.starts_with("cannot reach the database at postgres@127.0.0.1"),
        "{sentence}"
    );
    assert!(
        sentence.to_lowercase().contains("certificate"),
        "{sentence}"
    );

    // verify-ca checks the issuer only: the address is accepted.
    let (store, _) = connect(server.url("127.0.0.1", "verify-ca"))
        .await
        .expect("verify-ca accepts the address");
    assert!(encrypted(&store).await);
    store.close().await;

    // Both listed, the one that does not verify first: each host is checked under its own
    // name, and the console uses the one that passes.
    let (store, _) = connect(server.url("127.0.0.1,localhost", "verify-full"))
        .await
        .expect("the second host verifies");
    assert!(
        store.host().to_string().starts_with("postgres@localhost:"),
        "{}",
        store.host()
    );
    assert!(encrypted(&store).await);
    store.close().await;
    drop(server.cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_fails_verification_is_one_sentence_from_the_binary() {
    let server = start().await;
    let url = server.url("127.0.0.1", "verify-full");
    let output = common::cli::run(&["status", "--database-url", &url]);
    assert_ne!(output.status.code(), Some(0));
    let sentence = common::cli::assert_one_sentence(&output);
    assert!(sentence.contains("127.0.0.1"), "{sentence}");
    assert!(
        sentence.to_lowercase().contains("certificate"),
        "{sentence}"
    );
    drop(server.cluster);
}
