//! Inputs that are bounded and refused with a sentence of the console's own: a reason file that
//! never ends, CRLF reasons, number arguments, hidden characters in JSON, and the log's
//! permissions.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use common::TestDb;
use common::cli::{BINARY, assert_one_sentence, on, run, stderr, stdout};
use common::fixture::{self, JobSpec};

#[tokio::test(flavor = "multi_thread")]
async fn a_reason_file_is_read_only_up_to_the_longest_reason_and_crlf_stores_no_cr() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let space = job.space.to_string();
    let image = fixture::ledger_image(&db.pool).await;
    let endless = on(
        &db,
        &["retry", &space, "--reason-file", "/dev/zero", "--yes"],
    );
    assert_eq!(endless.status.code(), Some(2), "{}", stderr(&endless));
    assert!(
        assert_one_sentence(&endless).contains("longer than 2000 bytes"),
        "{}",
        stderr(&endless)
    );
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing written"
    );

    let dir = tempfile::tempdir().expect("dir");
    let crlf = dir.path().join("crlf.txt");
    std::fs::write(&crlf, "INC-4211\r\nthe parser fix is deployed\r\n").expect("CRLF");
    let crlf = crlf.to_str().expect("path");
    let applied = on(&db, &["retry", &space, "--reason-file", crlf, "--yes"]);
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let reason: String = sqlx::query_scalar("SELECT reason FROM bootstrap_console.audit_log")
        .fetch_one(&db.pool)
        .await
        .expect("reason");
    assert_eq!(reason, "INC-4211\nthe parser fix is deployed");
    // The same text typed with a lone CR is refused, as before.
    let lone = on(&db, &["retry", &space, "--reason", "a\rb", "--dry-run"]);
    assert_eq!(lone.status.code(), Some(2));
}

#[test]
fn number_arguments_are_refused_with_the_consoles_own_sentence() {
    for (args, said) in [
        (
            vec!["watch", "--interval", "inf"],
            "\"inf\" is not a number of seconds",
        ),
        (
            vec!["watch", "--interval", "-1"],
            "-1 is outside 0.5 to 60 seconds",
        ),
        (
            vec!["watch", "--interval", "1e9"],
            "1e9 is outside 0.5 to 60 seconds",
        ),
        (
            vec!["status", "--orphan-after-mins", "-3"],
            "-3 is outside 0 to 10080 minutes",
        ),
        (
            vec![
                "retry",
                "--state",
                "failed",
                "--reason",
                "x",
                "--apply-deadline-secs",
                "NaN",
            ],
            "\"NaN\" is not a number of seconds",
        ),
        (
            vec![
                "retry", "--state", "failed", "--reason", "x", "--limit", "-1",
            ],
            "-1 is outside 1 to 100000 spaces",
        ),
        (
            vec![
                "retry", "--state", "failed", "--reason", "x", "--limit", "2.5",
            ],
            "2.5 is not a whole number of spaces",
        ),
        (
            vec!["watch", "--bulk-cap", "0"],
            "0 is outside 1 to 100000 spaces",
        ),
        (
            vec!["check", "--batch", "NaN"],
            "\"NaN\" is not a number of bootstraps",
        ),
        (
            vec!["check", "--batch", "1e9"],
            "1e9 is outside 1 to 100000 bootstraps",
        ),
    ] {
        let output = run(&args);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(!err.contains("-- -"), "no advice to write `-- -1`: {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn status_json_escapes_characters_that_hide_or_spoof_a_tenant() {
    let db = TestDb::migrated().await;
    let spoof = "acme\u{200b}\u{feff}\u{7f}";
    fixture::job(&db.pool, &JobSpec::new(spoof, "queued")).await;
    let output = on(&db, &["status", "--json"]);
    let text = stdout(&output);
    for raw in ['\u{200b}', '\u{feff}', '\u{7f}'] {
        assert!(!text.contains(raw), "{raw:?} passed through raw");
    }
    for escaped in ["\\u200b", "\\ufeff", "\\u007f"] {
        assert!(text.contains(escaped), "{escaped} in {text}");
    }
    let document: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        document["spaces"][0]["tenant_id"], spoof,
        "the text itself is kept"
    );
}

#[test]
fn the_log_is_private_to_its_user() {
    let home = tempfile::tempdir().expect("home");
    let output = Command::new(BINARY)
        .args([
            "status",
            "--database-url",
            "postgres://ops@%2Ftmp%2Fbc-no-server:5432/x",
        ])
        .env("HOME", home.path())
        .env_remove("XDG_STATE_HOME")
        .env_remove("BOOTSTRAP_CONSOLE_LOG_DIR")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(4));
    let dir = home.path().join(".local/state/bootstrap-console");
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("console.log")), 0o600);
}
