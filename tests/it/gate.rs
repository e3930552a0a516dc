//! `status --until`: a deployment pipeline waiting on the rollout, through the real binary
//! against a real PostgreSQL — done, stopped by a failure or an orphan, and timed out, each
//! with its documented exit code.

use crate::common;

use common::TestDb;
use common::cli::{on, stderr, stdout};
use common::fixture::{self, JobSpec};

/// `status --until CHECKPOINT` with `extra` flags, polling every half second.
async fn gate(db: &TestDb, until: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["status", "--until", until, "--every", "0.5"];
    args.extend(extra);
    let db_args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let url = db.url();
    tokio::task::spawn_blocking(move || {
        let mut all: Vec<&str> = db_args.iter().map(String::as_str).collect();
        all.extend(["--database-url", url.as_str()]);
        common::cli::run(&all)
    })
    .await
    .expect("the gate")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_waits_until_every_space_reaches_the_checkpoint() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "succeeded")).await;
    let moving = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    // The gate starts; once it has said it is waiting, a worker moves the second job on.
    let mut child = std::process::Command::new(common::cli::BINARY)
        .args([
            "status",
            "--until",
            "verifying",
            "--every",
            "0.5",
            "--timeout",
            "30s",
        ])
        .args(["--database-url", &db.url()])
        .env("BOOTSTRAP_CONSOLE_LOG_DIR", common::pty::console_log_dir())
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("RUST_LOG")
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the gate");
    let (lines, said) = std::sync::mpsc::channel::<String>();
    let reader = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let collected = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut out = String::new();
        for line in reader.lines().map_while(Result::ok) {
            let _ = lines.send(line.clone());
            out.push_str(&line);
            out.push('\n');
        }
        out
    });
    let waiting = tokio::task::spawn_blocking(move || {
        said.iter()
            .any(|line| line.contains("verifying 1/2 (50.0%)"))
    })
    .await
    .expect("read the gate");
    assert!(waiting, "the gate said it was waiting");
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET checkpoint = 'verifying', \
         row_version = row_version + 1, updated_at = now() WHERE id = $1",
    )
    .bind(moving.bootstrap)
    .execute(&db.pool)
    .await
    .expect("move on");
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("the gate");
    let out = collected.join().expect("the gate's output");
    let waited = std::process::Output {
        stdout: out.into_bytes(),
        ..waited
    };
    let out = stdout(&waited);
    assert_eq!(waited.status.code(), Some(0), "{out}{}", stderr(&waited));
    assert!(out.contains("verifying 1/2 (50.0%)"), "it waited:\n{out}");
    assert!(
        out.trim_end()
            .ends_with("done: every space in scope has reached verifying"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_stops_the_gate_at_once_unless_it_keeps_going() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let stopped = gate(&db, "published", &["--timeout", "30s"]).await;
    let out = stdout(&stopped);
    assert_eq!(stopped.status.code(), Some(1), "{out}{}", stderr(&stopped));
    assert!(out.contains("stopped: 1 failed"), "{out}");
    // Failed past the checkpoint, it has reached it: every snapshot is captured.
    let captured = gate(&db, "snapshot_captured", &["--timeout", "30s"]).await;
    assert_eq!(captured.status.code(), Some(0), "{}", stdout(&captured));

    let kept = gate(&db, "published", &["--keep-going", "--timeout", "2s"]).await;
    let out = stdout(&kept);
    assert_eq!(kept.status.code(), Some(9), "{out}{}", stderr(&kept));
    assert!(out.contains("timed out after 2s: published 0/2"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_orphan_blocks_the_gate_and_a_routine_writer_does_not() {
    let db = TestDb::migrated().await;
    let held = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    // A writer at work for a minute: routine, the gate waits (and times out).
    let lease = fixture::lease(&db.pool, "acme", held.space, 60).await;
    let waited = gate(&db, "snapshot_captured", &["--timeout", "2s"]).await;
    let out = stdout(&waited);
    assert_eq!(waited.status.code(), Some(9), "{out}{}", stderr(&waited));
    assert!(out.contains("orphan-blocked 0"), "{out}");

    // The same lease two hours old: no writer will release it.
    sqlx::query(
        "UPDATE knowledge_space_mutation_leases SET acquired_at = now() - interval '2 hours' \
         WHERE id = $1",
    )
    .bind(lease)
    .execute(&db.pool)
    .await
    .expect("age the lease");
    let stopped = gate(&db, "snapshot_captured", &["--timeout", "30s"]).await;
    let out = stdout(&stopped);
    assert_eq!(stopped.status.code(), Some(1), "{out}{}", stderr(&stopped));
    assert!(
        out.contains("stopped: 1 blocked by an orphan-suspect mutation lease"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gate_refuses_what_it_cannot_mean() {
    let db = TestDb::migrated().await;
    for args in [
        &["status", "--until", "published", "--json"][..],
        &["status", "--until", "published", "--timeout", "soon"][..],
        &["status", "--timeout", "5m"][..],
        &["status", "--until", "published", "--every", "nan"][..],
        &["status", "--until", "published", "--timeout", "1e20"][..],
    ] {
        let refused = on(&db, args);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&refused)
        );
    }
    // An empty scope has nothing to wait for.
    let empty = gate(&db, "published", &[]).await;
    assert_eq!(empty.status.code(), Some(0), "{}", stderr(&empty));
}

/// On a terminal the gate redraws one bar in place, and ends it before its last word.
#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_the_gate_draws_a_bar() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "succeeded")).await;
    fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let mut console = common::pty::Console::start(
        &[
            "status",
            "--until",
            "published",
            "--every",
            "0.5",
            "--timeout",
            "2s",
            "--database-url",
            &db.url(),
        ],
        &[],
        80,
        24,
    );
    let screen = console.wait_for("timed out after 2s", 20);
    assert!(
        screen.contains("[##########----------] ")
            && screen.contains("s 1/2 · failed 0 · canceled 0 · orphan 0 · published"),
        "{screen}"
    );
    assert_eq!(console.wait_exit(10), 9);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_or_an_unreadable_row_stops_the_gate_too() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "succeeded")).await;
    let canceled = fixture::job(&db.pool, &JobSpec::new("acme", "canceled")).await;
    let stopped = gate(&db, "published", &["--timeout", "30s"]).await;
    assert_eq!(stopped.status.code(), Some(1), "{}", stderr(&stopped));
    assert!(
        stdout(&stopped).contains("stopped: 1 canceled"),
        "{}",
        stdout(&stopped)
    );
    // A row in a state the protocol forbids is an outage nobody can judge: never "done".
    sqlx::query("DELETE FROM legacy_space_publication_bootstraps WHERE id = $1")
        .bind(canceled.bootstrap)
        .execute(&db.pool)
        .await
        .expect("delete");
    let odd = fixture::job(&db.pool, &JobSpec::new("acme", "succeeded")).await;
    fixture::force_run_state(&db.pool, odd.bootstrap, "paused").await;
    let stopped = gate(&db, "published", &["--timeout", "30s"]).await;
    let out = stdout(&stopped);
    assert_eq!(stopped.status.code(), Some(1), "{out}{}", stderr(&stopped));
    assert!(out.contains("published 1/2"), "{out}");
    assert!(out.contains("stopped: 1 unreadable"), "{out}");
}
