//! The live console end to end: the real binary in a pseudo-terminal against a real PostgreSQL
//! whose ledger the simulator produced.

use crate::common;

use std::time::Duration;

use bootstrap_console::domain::ids::IdNames;
use bootstrap_console::sandbox::PrivateCluster;
use bootstrap_console::sandbox::sim::{self, RunConfig, SeedConfig, Simulation};
use bootstrap_console::store::schema;
use common::TestDb;
use common::pty::Console;
use sqlx::{ConnectOptions, Connection};
use uuid::Uuid;

const HOSTILE: &str =
    "pdf parser: \u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mFATAL\u{1b}[0m \u{202e}gnp.exe";

/// A small rollout run by the simulator until at least one space failed.
async fn rollout_with_a_failure() -> (TestDb, Uuid, Uuid) {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let seed = SeedConfig {
        tenants: 2,
        spaces_per_tenant: 6,
        large_share: 0.0,
        documents: (4, 20),
        writer_share: 0.0,
        ..SeedConfig::default()
    };
    let report = sim::seed(&mut conn, &seed).await.expect("seed");
    let config = RunConfig {
        workers: 3,
        document_time: Duration::from_millis(5),
        item_failure_rate: 0.08,
        worker_crash_rate: 0.0,
        slow_document_rate: 0.0,
        ..RunConfig::default()
    };
    let simulation = Simulation::start(db.fresh_pool().await, config, report.writers);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let failed = loop {
        let failed: Option<(Uuid, Uuid)> = sqlx::query_as(
            "SELECT id, knowledge_space_id FROM legacy_space_publication_bootstraps \
             WHERE run_state = 'failed' ORDER BY id LIMIT 1",
        )
        .fetch_optional(&db.pool)
        .await
        .expect("failed job");
        if let Some(failed) = failed {
            break failed;
        }
        assert!(tokio::time::Instant::now() < deadline, "no job failed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    simulation.stop().await;
    // The platform's parser echoed hostile bytes into the error message.
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET last_error_message = $2 WHERE id = $1",
    )
    .bind(failed.0)
    .bind(HOSTILE)
    .execute(&db.pool)
    .await
    .expect("hostile message");
    (db, failed.0, failed.1)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_filters_to_a_failed_space_opens_it_and_retries_it() {
    let (db, bootstrap, space) = rollout_with_a_failure().await;
    let url = db.url();
    let mut console = Console::start(
        &["watch", "--database-url", &url, "--label", "staging"],
        &[],
        100,
        30,
    );

    console.wait_ready("READ-WRITE", 20);
    console.wait_for("FAILED", 20);
    let code = IdNames::EMPTY.short(&space);
    console.send("/");
    console.send(&code);
    console.send("\r");
    let board = console.wait_until("the filter to narrow the board to one space", 10, |s| {
        s.contains(" 1 of ") && s.contains(&code)
    });
    assert!(
        board.contains("STAGING"),
        "the environment label is shown:\n{board}"
    );

    console.send("\r");
    let detail = console.wait_for("── bootstrap", 10);
    assert!(detail.contains(&space.to_string()), "{detail}");
    let detail = console.wait_for("FATAL", 10);
    assert!(
        detail.contains('␛'),
        "escapes are shown as marks:\n{detail}"
    );

    console.send("r");
    console.wait_for("will change", 10);
    console.reason_and_yes("fixed the parser, retrying");
    let done = console.wait_for("retry applied", 10);
    assert!(done.contains("audit record"), "{done}");

    let (run_state, audits, reason): (String, i64, Option<String>) = sqlx::query_as(
        "SELECT b.run_state, (SELECT count(*) FROM bootstrap_console.audit_log), \
                (SELECT max(reason) FROM bootstrap_console.audit_log WHERE bootstrap_id = b.id) \
         FROM legacy_space_publication_bootstraps b WHERE b.id = $1",
    )
    .bind(bootstrap)
    .fetch_one(&db.pool)
    .await
    .expect("ledger");
    assert_eq!(run_state, "queued");
    assert_eq!(audits, 1);
    assert_eq!(reason.as_deref(), Some("fixed the parser, retrying"));

    console.send("\r");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
    assert!(!console.alternate_screen(), "the terminal is restored");
    let raw = console.raw_output();
    assert!(
        !raw.windows(5).any(|w| w == b"]0;pw"),
        "no hostile OSC reached the terminal"
    );
    let seen = console.seen.lock().expect("seen");
    assert!(
        seen.titles
            .iter()
            .all(|t| !t.windows(5).any(|w| w == b"pwned"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn y_copies_the_selected_space_with_osc_52_and_ctrl_c_restores_the_terminal() {
    let (db, _bootstrap, space) = rollout_with_a_failure().await;
    let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 80, 24);
    console.wait_for("FAILED", 20);
    console.send("/");
    console.send(&IdNames::EMPTY.short(&space));
    console.send("\r");
    console.wait_until("one row", 10, |s| s.contains(" 1 of "));
    console.send("y");
    console.wait_for("copied", 5);
    let copied = console.seen.lock().expect("seen").clipboard.clone();
    assert_eq!(copied.len(), 1, "one OSC 52 write");
    let decoded = decode_base64(&copied[0]);
    assert_eq!(decoded, space.to_string());
    console.send("\u{3}");
    assert_eq!(console.wait_exit(10), 0);
    assert!(!console.alternate_screen());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_that_is_too_small_says_so() {
    let db = TestDb::migrated().await;
    let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 60, 20);
    let screen = console.wait_for("terminal too small", 20);
    assert!(
        screen.contains("60×20") && screen.contains("80×24"),
        "{screen}"
    );
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_restore_the_terminal() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let db = TestDb::migrated().await;
    for (signal, code) in [
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
        (Signal::SIGQUIT, 131),
    ] {
        let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 80, 24);
        console.wait_ready("READ-WRITE", 20);
        assert!(console.alternate_screen());
        kill(Pid::from_raw(console.pid().expect("pid") as i32), signal).expect("signal");
        assert_eq!(
            console.wait_exit(10),
            code,
            "{signal} ends the console cleanly, with 128 + its number"
        );
        assert!(
            !console.alternate_screen(),
            "{signal} restores the terminal"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_screen_goes_stale_while_the_database_is_down_and_live_again_after() {
    let mut cluster = tokio::task::spawn_blocking(PrivateCluster::start)
        .await
        .expect("join")
        .expect("a cluster of our own to stop and start");
    let mut admin = cluster
        .connect_options("postgres")
        .connect()
        .await
        .expect("admin");
    sqlx::raw_sql("CREATE DATABASE console")
        .execute(&mut admin)
        .await
        .expect("db");
    admin.close().await.expect("close");
    let mut conn = cluster
        .connect_options("console")
        .connect()
        .await
        .expect("connect");
    schema::apply_sandbox_schema(&mut conn)
        .await
        .expect("schema");
    conn.close().await.expect("close");
    let url = cluster.url("console");
    let logs = tempfile::tempdir().expect("log dir");
    let mut console = Console::start(
        &["watch", "--database-url", &url, "--interval", "0.5"],
        &[(
            "BOOTSTRAP_CONSOLE_LOG_DIR",
            logs.path().to_str().expect("utf-8"),
        )],
        100,
        30,
    );
    let pid = console.pid().expect("the console pid");
    console.wait_for("live ", 20);

    tokio::task::block_in_place(|| cluster.stop_server()).expect("stop the server");
    let stale = console.wait_for("reconnecting", 30);
    assert!(stale.contains("stale"), "{stale}");

    tokio::task::block_in_place(|| cluster.start_server()).expect("start it again");
    console.wait_until("the console to recover by itself", 60, |s| {
        s.contains("live ") && !s.contains("reconnecting")
    });
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
    // The log tells the outage and the recovery, and why the console ended.
    let log = std::fs::read_to_string(logs.path().join("console.log")).expect("the log");
    for line in [
        "poll failed",
        "polls recovered after",
        "console ended: quit",
    ] {
        assert!(log.contains(line), "{line:?} missing from:\n{log}");
    }
    // Every line says which process wrote it.
    let pid = format!("Z [{pid}]");
    assert!(
        log.lines().all(|line| line.contains(&pid)),
        "a line without {pid}:\n{log}"
    );
}

fn decode_base64(data: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in data.iter().filter(|b| **b != b'=') {
        let value = ALPHABET.iter().position(|a| a == byte).expect("base64") as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread")]
async fn quitting_while_an_action_is_applied_waits_for_its_answer_and_says_it() {
    use common::fixture::{self, JobSpec};
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    // Another transaction holds the row, so the cancel waits for it.
    let holder = fixture::hold_row(&db.pool, job.bootstrap).await;
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
    console.wait_ready("READ-WRITE", 20);
    console.send("c");
    console.wait_for("will change", 10);
    console.reason_and_yes("maintenance");
    console.wait_for("applying", 5);
    console.send("\x03");
    console.wait_for("Ctrl-C again stops and quits", 5);
    console.send("\x03");
    // The wait is stopped, the request looked up (its own transaction ended), the answer
    // printed once the terminal is restored.
    assert_eq!(console.wait_exit(20), 0, "{}", console.screen());
    assert!(!console.alternate_screen());
    let after = console.screen();
    assert!(
        after.contains("not applied — you stopped waiting"),
        "{after}"
    );
    holder.rollback().await.expect("release");
    assert_eq!(fixture::audit_count(&db.pool).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_run_without_a_database_says_how_to_name_one() {
    // No URL and a PG* environment that points nowhere: a sentence, not a blank screen.
    let mut console = Console::start(
        &["watch"],
        &[("PGHOST", "/tmp/bc-no-such-server"), ("PGPORT", "5432")],
        80,
        24,
    );
    assert_eq!(console.wait_exit(10), 4, "{}", console.screen());
    let screen = console.screen();
    assert!(
        screen.contains("no such socket") && screen.contains("bootstrap-console demo"),
        "{screen}"
    );
    assert!(!console.alternate_screen());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dumb_terminal_is_pointed_at_status_and_a_c_locale_gets_ascii() {
    let db = TestDb::migrated().await;
    let url = db.url();
    for term in ["dumb", ""] {
        let mut console = Console::start(
            &["watch", "--database-url", &url],
            &[("TERM", term)],
            80,
            24,
        );
        assert_eq!(console.wait_exit(10), 2, "{}", console.screen());
        let screen = console.screen();
        assert!(screen.contains("bootstrap-console status"), "{screen}");
    }
    // `--ascii`, or a locale whose character set is not UTF-8: nothing but ASCII reaches the
    // terminal in a whole session — board, detail, tenants, leases, audit, help, a dialog —
    // even with text from the database that is not ASCII.
    let job = common::fixture::job(
        &db.pool,
        &common::fixture::JobSpec {
            error_message: "parser \u{1b}[2Jcrashed",
            ..common::fixture::JobSpec::new("株式会社\u{202e}", "failed")
        },
    )
    .await;
    common::fixture::lease(&db.pool, "株式会社\u{202e}", job.space, 7200).await;
    for (flags, env) in [(&["--ascii"][..], "C.UTF-8"), (&[][..], "C")] {
        let mut args = vec!["watch", "--database-url", &url];
        args.extend(flags);
        let mut console = Console::start(&args, &[("LANG", env)], 80, 24);
        console.wait_ready("READ-WRITE", 20);
        console.wait_for("FAILED", 20);
        console.send("\r");
        // Text from the database says what it held: escaped, never a bare `?`.
        console.wait_for("\\u{682a}\\u{5f0f}\\u{4f1a}\\u{793e}\\u{202e}", 10);
        console.wait_for("parser \\ecrashed", 10);
        for (keys, shows) in [
            ("\x1b", "FAILED"),
            ("\t", "tenant"),
            ("\t", "lease"),
            // The lease dialog's evidence: a sentence made of database text, drawn in ASCII.
            ("x", "\\u{682a}\\u{5f0f}\\u{4f1a}\\u{793e}\\u{202e}"),
            ("\x1b", "lease"),
            ("\t", "no operator actions"),
            // The health view runs the ledger check: its gauge and result in ASCII too.
            ("\t", "0 finding(s) in 1 "),
            ("\t", "FAILED"),
            ("?", "closes this help"),
            ("?", "FAILED"),
            ("r", "reason"),
        ] {
            console.send(keys);
            console.wait_for(shows, 10);
        }
        console.send("\x1b");
        console.send("q");
        assert_eq!(console.wait_exit(10), 0);
        let raw = console.raw_output();
        let foreign: String = String::from_utf8_lossy(&raw)
            .chars()
            .filter(|c| !c.is_ascii())
            .collect();
        assert!(foreign.is_empty(), "{flags:?} LANG={env}: {foreign:?}");
        // The console's own glyphs in their ASCII forms, not escaped; nothing said twice.
        let text = String::from_utf8_lossy(&raw);
        for never in [
            "\\u{2192}",
            "\\u{2014}",
            "\\u{2026}",
            "\\u{fffd}",
            "\\u{241b}",
        ] {
            assert!(
                !text.contains(never),
                "{flags:?} LANG={env}: {never} written"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn colours_are_written_at_the_terminals_depth() {
    let db = TestDb::migrated().await;
    common::fixture::job(&db.pool, &common::fixture::JobSpec::new("acme", "failed")).await;
    let url = db.url();
    // (TERM, COLORTERM, what must not be written)
    for (term, colorterm, never) in [
        ("xterm", "", &["38;5;", "48;5;", "38;2;", "48;2;"][..]),
        ("vt100", "", &["38;5;", "48;5;", "38;2;", "48;2;"][..]),
        ("xterm-256color", "", &["38;2;", "48;2;"][..]),
    ] {
        let mut console = Console::start(
            &["watch", "--database-url", &url],
            &[("TERM", term), ("COLORTERM", colorterm)],
            80,
            24,
        );
        console.wait_for("FAILED", 20);
        console.send("q");
        assert_eq!(console.wait_exit(10), 0);
        let raw = String::from_utf8_lossy(&console.raw_output()).into_owned();
        for code in never {
            assert!(!raw.contains(code), "TERM={term}: {code:?} written");
        }
        if term == "xterm" {
            assert!(raw.contains("\x1b[0;"), "basic colour codes are written");
        }
    }
}

/// A table lock held by someone is said as a lock, with who holds it, not as a connection
/// problem; once let go, the board is live again.
#[tokio::test(flavor = "multi_thread")]
async fn a_locked_ledger_is_said_with_its_holder_not_as_reconnecting() {
    let db = TestDb::migrated().await;
    common::fixture::job(
        &db.pool,
        &common::fixture::JobSpec::new("tenant-a", "failed"),
    )
    .await;
    let mut console = Console::start(
        &["watch", "--database-url", &db.url(), "--interval", "1"],
        &[],
        180,
        30,
    );
    console.wait_ready("READ-WRITE", 20);
    let mut holder = db
        .options()
        .application_name("schema-change")
        .connect()
        .await
        .expect("the holder's session");
    sqlx::raw_sql("BEGIN; LOCK TABLE legacy_space_publication_bootstraps IN ACCESS EXCLUSIVE MODE")
        .execute(&mut holder)
        .await
        .expect("the table lock");
    let screen = console.wait_for("ledger locked", 30);
    let screen = if screen.contains("locked: pid") {
        screen
    } else {
        console.wait_for("locked: pid", 10)
    };
    assert!(!screen.contains("reconnecting"), "{screen}");
    assert!(screen.contains("schema-change"), "{screen}");
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("let go");
    console.wait_until("the board to be live again", 30, |s| {
        !s.contains("ledger locked") && s.contains("live")
    });
    // The usual case: an ALTER waits behind a long transaction, and reads queue behind it.
    let mut long = db.connect().await;
    sqlx::raw_sql("BEGIN; SELECT count(*) FROM legacy_space_publication_bootstraps")
        .execute(&mut long)
        .await
        .expect("a long transaction");
    let alter = tokio::spawn(async move {
        let _ = sqlx::raw_sql(
            "BEGIN; LOCK TABLE legacy_space_publication_bootstraps IN ACCESS EXCLUSIVE MODE; \
             ROLLBACK",
        )
        .execute(&mut holder)
        .await;
        holder
    });
    let screen = console.wait_until("the ALTER that waits, named", 30, |s| {
        s.contains("for ACCESS EXCLUSIVE on") && s.contains("behind pid")
    });
    assert!(screen.contains("behind pid"), "{screen}");
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut long)
        .await
        .expect("end the long transaction");
    alter.await.expect("the ALTER's turn");
    console.wait_until("the board to be live again", 30, |s| {
        !s.contains("ledger locked") && s.contains("live")
    });
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

/// Keys written in one go act as keys typed slowly: each on what the earlier ones produced.
#[tokio::test(flavor = "multi_thread")]
async fn keys_sent_with_no_gap_act_on_the_rows_the_earlier_keys_asked_for() {
    let (db, _bootstrap, _space) = rollout_with_a_failure().await;
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
    console.wait_ready("READ-WRITE", 20);
    console.wait_for("FAILED", 20);
    // Needs an operator, watch, then only failed, then mark all: in one write.
    console.send_now("fff*");
    let screen = console.wait_for("marked", 10);
    let header = screen
        .lines()
        .find(|l| l.contains("marked"))
        .expect("the board's header");
    let numbers: Vec<usize> = header
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    // "│ N of M · N marked │ only failed"
    assert!(header.contains("only failed"), "{header}");
    assert_eq!(numbers.len(), 3, "{header}");
    assert_eq!(
        numbers[0], numbers[2],
        "the rows shown are the rows marked: {header}"
    );
    // `u` says what it cleared now, and `/` offers the filter's own keys.
    console.send("u");
    console.wait_for(&format!("cleared {} mark(s)", numbers[0]), 10);
    console.send("/");
    let typing = console.wait_until("the filter's hints", 10, |s| {
        s.lines().last().is_some_and(|l| l.contains("keep"))
    });
    let hints = typing.lines().last().unwrap_or_default();
    assert!(!hints.contains("retry"), "{hints}");
    console.send("\u{1b}");
    // Sort and reverse in one write: the label names the order of the rows shown.
    console.send_now("sS");
    console.wait_for("by tenant Z-A", 10);
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

/// While paused the board is the snapshot it stopped on: a lease that runs out meanwhile does
/// not age on it; it catches up on resume.
#[tokio::test(flavor = "multi_thread")]
async fn a_paused_board_does_not_age_and_catches_up_on_resume() {
    let (db, _bootstrap, _space) = rollout_with_a_failure().await;
    // One job runs, with a worker lease that ends in 20 s; every other is failed or canceled.
    let running: Uuid = sqlx::query_scalar(
        "UPDATE legacy_space_publication_bootstraps SET run_state = 'running', \
                checkpoint = 'rebuilding', worker_id = 'worker-paused', \
                lease_token = gen_random_uuid(), heartbeat_at = now(), \
                lease_expires_at = now() + interval '20 seconds', completed_at = NULL, \
                last_error_code = NULL, last_error_message = NULL, updated_at = now(), \
                row_version = row_version + 1 \
         WHERE id = (SELECT id FROM legacy_space_publication_bootstraps \
                     WHERE run_state <> 'failed' ORDER BY id LIMIT 1) \
         RETURNING id",
    )
    .fetch_one(&db.pool)
    .await
    .expect("a running job");
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET run_state = 'canceled', \
                worker_id = NULL, lease_token = NULL, heartbeat_at = NULL, \
                lease_expires_at = NULL, completed_at = now() \
         WHERE run_state IN ('running', 'queued') AND id <> $1",
    )
    .bind(running)
    .execute(&db.pool)
    .await
    .expect("the others done");
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
    console.wait_ready("READ-WRITE", 20);
    console.wait_for("worker-paused", 20);
    console.send("p");
    let paused = console.wait_for("PAUSED · as of", 10);
    assert!(!paused.contains("reclaim"), "{paused}");
    // Past the lease's end by the database's clock, the paused board still shows the job as
    // it was.
    common::until("the worker lease to run out", 40, || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT now() > lease_expires_at + interval '1 second' \
             FROM legacy_space_publication_bootstraps WHERE id = $1",
        )
        .bind(running)
        .fetch_one(&db.pool)
        .await
        .expect("expiry")
    })
    .await;
    let still = console.screen();
    assert!(
        !still.contains("reclaim") && still.contains("PAUSED · as of"),
        "{still}"
    );
    console.send("p");
    // Just expired: watched as reclaiming (a live worker takes it within the grace).
    console.wait_until("the expired lease after resuming", 10, |s| {
        s.contains("reclaim")
    });
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

/// A ledger whose database never had `migrate`: the header says at once that actions need it,
/// and no action is offered.
#[tokio::test(flavor = "multi_thread")]
async fn a_database_without_migrate_says_actions_need_it_from_the_start() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    for unit in [&schema::PLATFORM_STANDIN, &schema::LEGACY_SPACE_BOOTSTRAP] {
        schema::apply_unit(&mut conn, unit).await.expect("ledger");
    }
    let spec = common::fixture::JobSpec::new("tenant-a", "failed");
    common::fixture::job(&db.pool, &spec).await;
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
    let screen = console.wait_ready("ACTIONS NEED MIGRATE", 20);
    assert!(!screen.contains("READ-WRITE"), "{screen}");
    let hints = screen.lines().last().unwrap_or_default().to_string();
    assert!(!hints.contains("retry"), "no action is offered: {hints}");
    console.send("r");
    console.wait_for("bootstrap-console migrate", 10);
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

/// The detail at 80×24: a blocked space's lease on its first screen, content below said, and
/// a long message whole (a lone CR shown as `\r`) by scrolling.
#[tokio::test(flavor = "multi_thread")]
async fn the_detail_shows_what_blocks_says_what_is_below_and_keeps_the_whole_message() {
    use common::fixture::{self, JobSpec};
    let db = TestDb::migrated().await;
    let blocked = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    fixture::lease(&db.pool, "acme", blocked.space, 7200).await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let message = format!(
        "converter said:\rstage 2 {} END-OF-MESSAGE",
        "word ".repeat(400)
    );
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET last_error_message = $2 WHERE id = $1",
    )
    .bind(failed.bootstrap)
    .bind(&message)
    .execute(&db.pool)
    .await
    .expect("a long message");
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 80, 24);
    console.wait_ready("READ-WRITE", 20);
    console.wait_for("FAILED", 20);
    // The failed space is first, the blocked one second.
    console.send("j");
    console.send("\r");
    let detail = console.wait_for("blocked by", 10);
    assert!(
        detail.contains("ORPHAN SUSPECT") && detail.contains("held 2h"),
        "{detail}"
    );
    assert!(detail.contains("more line(s) below"), "{detail}");
    console.send("\u{1b}");
    console.send("g");
    console.send("\r");
    console.wait_for("converter said:\\rstage 2", 10);
    // Page by page to the message's end: all of it is there.
    let mut seen = false;
    for _ in 0..20 {
        if console.screen().contains("END-OF-MESSAGE") {
            seen = true;
            break;
        }
        console.send("\u{1b}[6~");
    }
    assert!(seen, "the message's end is reached:\n{}", console.screen());
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}
