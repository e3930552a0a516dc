//! libpq's defaults and conventions, as psql users expect them: no database named at all, a
//! connection service, and the sentences for a missing TLS file, a port where something other
//! than PostgreSQL answers, a password that was never given, and a scheme that is not
//! PostgreSQL's.

use crate::common;

use std::io::{Read, Write};

use common::TestDb;
use common::cli::{assert_one_sentence, run, run_with_env, stderr, stdout};
use common::fixture::{self, JobSpec};

/// With nothing named, psql's defaults: the local socket directory, the operating system's
/// user, and the database named after it — and the sentence says where it tried.
#[test]
fn with_no_database_named_the_console_tries_where_psql_would() {
    let home = tempfile::tempdir().expect("home");
    let home = home.path().to_string_lossy().into_owned();
    let dir = if std::path::Path::new("/var/run/postgresql").is_dir() {
        "/var/run/postgresql"
    } else {
        "/tmp"
    };
    if std::path::Path::new(dir).join(".s.PGSQL.5432").exists() {
        // A server of this machine's own answers there: nothing to tell apart.
        return;
    }
    let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .expect("passwd")
        .expect("an entry")
        .name;
    let output = run_with_env(&["status"], &[("HOME", &home)]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let sentence = assert_one_sentence(&output);
    assert!(
        sentence.contains(&format!("{user}@{dir}:5432/{user}")),
        "{sentence}"
    );
    assert!(sentence.contains("no such socket"), "{sentence}");
    assert!(!sentence.contains("localhost"), "{sentence}");
}

/// `service=`, `PGSERVICE` and a URL's `?service=` name a database kept in a service file.
#[tokio::test(flavor = "multi_thread")]
async fn a_service_names_the_database_as_libpq_keeps_it() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let options = db.options();
    let home = tempfile::tempdir().expect("home");
    let file = home.path().join("services.conf");
    std::fs::write(
        &file,
        format!(
            "# kept by the operator\n[platform]\nhost={}\nport={}\ndbname={}\nuser={}\n",
            options
                .get_socket()
                .map_or(options.get_host().to_string(), |s| s.display().to_string()),
            options.get_port(),
            db.name,
            options.get_username()
        ),
    )
    .expect("service file");
    let file = file.to_string_lossy().into_owned();
    let home_dir = home.path().to_string_lossy().into_owned();
    let env = [
        ("HOME", home_dir.as_str()),
        ("PGSERVICEFILE", file.as_str()),
    ];
    for (args, extra) in [
        (vec!["status", "--json"], Some(("PGSERVICE", "platform"))),
        (
            vec!["status", "--json", "--database-url", "service=platform"],
            None,
        ),
        (
            vec![
                "status",
                "--json",
                "--database-url",
                "postgres:///?service=platform",
            ],
            None,
        ),
    ] {
        let mut envs = env.to_vec();
        envs.extend(extra);
        let output = run_with_env(&args, &envs);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        let document: serde_json::Value =
            serde_json::from_str(&stdout(&output)).expect("status JSON");
        assert_eq!(document["spaces"].as_array().expect("spaces").len(), 1);
    }
    let missing = run_with_env(&["status", "--database-url", "service=nowhere"], &env);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        assert_one_sentence(&missing).contains("no service \"nowhere\" is defined"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_missing_tls_file_is_named_and_another_scheme_is_a_usage_error() {
    let output = run(&[
        "status",
        "--database-url",
        "postgres://ops@db.internal/platform?sslmode=verify-full&sslrootcert=/nonexistent/ca.crt",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let sentence = assert_one_sentence(&output);
    assert!(
        sentence.contains("the sslrootcert file /nonexistent/ca.crt does not exist"),
        "{sentence}"
    );
    assert!(!sentence.contains("socket"), "{sentence}");
    for url in ["mysql://ops@db/platform", "postgress://ops@db/platform"] {
        let output = run(&["status", "--database-url", url]);
        assert_eq!(output.status.code(), Some(2), "{url}: {}", stderr(&output));
        assert!(
            assert_one_sentence(&output).contains("is not PostgreSQL's scheme"),
            "{}",
            stderr(&output)
        );
    }
}

/// A port where a web server answers: said as such, without the driver's internals.
#[test]
fn a_port_where_something_else_answers_is_named_as_not_postgresql() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            // A web server reads what came and answers that it is not a request it knows.
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(200)));
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            let _ = stream.shutdown(std::net::Shutdown::Write);
            let _ = stream.read(&mut request);
        }
    });
    for mode in ["prefer", "disable"] {
        let url = format!("postgres://ops@127.0.0.1:{port}/platform?sslmode={mode}");
        let output = run(&["status", "--database-url", &url]);
        assert_eq!(output.status.code(), Some(4), "{mode}: {}", stderr(&output));
        let sentence = assert_one_sentence(&output);
        assert!(sentence.contains("not PostgreSQL"), "{mode}: {sentence}");
        assert!(!sentence.contains("sqlx"), "{mode}: {sentence}");
    }
}

/// A server that asks for a password nobody gave: the sentence says where passwords come from.
#[tokio::test]
async fn a_password_never_given_is_said_with_where_passwords_come_from() {
    let cluster = common::password_cluster().await;
    let home = tempfile::tempdir().expect("home");
    let home = home.path().to_string_lossy().into_owned();
    let url = cluster.url("postgres").replace("postgres@", "ops@");
    let output = run_with_env(&["status", "--database-url", &url], &[("HOME", &home)]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let sentence = assert_one_sentence(&output);
    assert!(sentence.contains("refused the login"), "{sentence}");
    assert!(sentence.contains("no password was given"), "{sentence}");
    assert!(
        sentence.contains("PGPASSWORD") && sentence.contains(".pgpass"),
        "{sentence}"
    );
}
