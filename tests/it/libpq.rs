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

    // A password file others may read is not used, and the sentence says why.
    use std::os::unix::fs::PermissionsExt;
    let pgpass = std::path::Path::new(&home).join(".pgpass");
    std::fs::write(&pgpass, "*:*:postgres:ops:right-one\n").expect(".pgpass");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let open = run_with_env(&["status", "--database-url", &url], &[("HOME", &home)]);
    assert_eq!(open.status.code(), Some(4), "{}", stderr(&open));
    let sentence = assert_one_sentence(&open);
    assert!(sentence.contains("chmod 600"), "{sentence}");
    // A password file's entry gave the password refused: said so, with the entry it used.
    std::fs::write(&pgpass, "*:*:postgres:ops:stale-one\n").expect(".pgpass");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let stale = run_with_env(&["status", "--database-url", &url], &[("HOME", &home)]);
    assert_eq!(stale.status.code(), Some(4), "{}", stderr(&stale));
    let sentence = assert_one_sentence(&stale);
    assert!(
        sentence.contains(&format!("the password came from {}", pgpass.display()))
            && sentence.contains(":postgres:ops): is it current?")
            && !sentence.contains("no password was given"),
        "{sentence}"
    );
    // The right one gets the login through (the database has no ledger: exit 5).
    std::fs::write(&pgpass, "*:*:postgres:ops:right-one\n").expect(".pgpass");
    let right = run_with_env(&["status", "--database-url", &url], &[("HOME", &home)]);
    assert_eq!(right.status.code(), Some(5), "{}", stderr(&right));
}

/// `PGOPTIONS` would be sent as the startup `options`, which a pooler refuses and which
/// could point the console elsewhere unseen: said in one sentence, nothing sent, whatever the
/// URL says. The URL's own `options=` is the operator's explicit choice and is taken.
#[tokio::test(flavor = "multi_thread")]
async fn pgoptions_is_refused_with_a_sentence_and_options_in_the_url_is_taken() {
    let db = TestDb::migrated().await;
    let home = tempfile::tempdir().expect("home");
    let home = home.path().to_string_lossy().into_owned();
    let url = db.url();
    let envs = [
        ("HOME", home.as_str()),
        ("PGOPTIONS", "-c search_path=elsewhere"),
    ];
    let refused = run_with_env(&["status", "--database-url", &url], &envs);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let sentence = assert_one_sentence(&refused);
    assert!(
        sentence.contains("PGOPTIONS is set") && sentence.contains("env -u PGOPTIONS"),
        "{sentence}"
    );
    let separator = if url.contains('?') { '&' } else { '?' };
    let explicit = format!("{url}{separator}options=-c%20work_mem%3D8MB");
    // sqlx would add PGOPTIONS to the URL's options, not replace them: refused still.
    let both = run_with_env(&["status", "--database-url", &explicit], &envs);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    let taken = run_with_env(&["status", "--database-url", &explicit], &envs[..1]);
    assert!(
        matches!(taken.status.code(), Some(0 | 1)),
        "{}",
        stderr(&taken)
    );
}

/// A TLS file is checked only where the connection reads it, as libpq: nothing under
/// `sslmode=disable`, no root certificate under `prefer` (nothing is verified there), every
/// file under `verify-full`.
#[tokio::test(flavor = "multi_thread")]
async fn a_tls_file_is_checked_only_where_the_connection_reads_it() {
    let db = TestDb::migrated().await;
    let url = db.url();
    let separator = if url.contains('?') { '&' } else { '?' };
    for query in [
        "sslmode=disable&sslrootcert=/nonexistent/ca.crt&sslcert=/nonexistent/c.crt&sslkey=/nonexistent/c.key",
        "sslmode=prefer&sslrootcert=/nonexistent/ca.crt",
    ] {
        let output = run(&[
            "status",
            "--database-url",
            &format!("{url}{separator}{query}"),
        ]);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{query}: {}",
            stderr(&output)
        );
    }
    for (query, named) in [
        (
            "sslmode=prefer&sslcert=/nonexistent/c.crt&sslkey=/nonexistent/c.key",
            "sslcert",
        ),
        (
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.crt",
            "sslrootcert",
        ),
    ] {
        let output = run(&[
            "status",
            "--database-url",
            &format!("{url}{separator}{query}"),
        ]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{query}: {}",
            stderr(&output)
        );
        assert!(
            assert_one_sentence(&output).contains(&format!("the {named} file")),
            "{query}: {}",
            stderr(&output)
        );
    }
}
