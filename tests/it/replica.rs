//! Polling a hot standby while acting on the primary, on a real streaming pair (the sandbox's
//! primary and a standby made with `pg_basebackup`): where polls and actions go, lag shown
//! honestly, and time-driven signals judged as of the data.

use crate::common;

use std::time::Duration;

use common::cli::{run, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;
use common::replica::{Frozen, Pair};

/// `watch` acting on `database` and polling `standby`, in a `cols`×30 terminal.
fn watch(database: &str, standby: &str, cols: u16) -> Console {
    Console::start(
        &["watch", "--database-url", database, "--read-url", standby],
        &[],
        cols,
        30,
    )
}

/// Waits until the lease of `bootstrap`, as `server` holds it, has run out by that server's
/// clock.
async fn lease_expired_on(server: &sqlx::PgPool, bootstrap: uuid::Uuid) {
    common::until("the lease ran out by the server's clock", 60, || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT lease_expires_at <= clock_timestamp() \
             FROM legacy_space_publication_bootstraps WHERE id = $1",
        )
        .bind(bootstrap)
        .fetch_one(server)
        .await
        .expect("the lease's expiry")
    })
    .await;
}

/// Index and sequential scans of the bootstrap table on one server, as its statistics say.
async fn ledger_scans(pool: &sqlx::PgPool) -> i64 {
    sqlx::query("SELECT pg_stat_clear_snapshot()")
        .execute(pool)
        .await
        .expect("clear the stats snapshot");
    sqlx::query_scalar(
        "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables \
         WHERE relname = 'legacy_space_publication_bootstraps'",
    )
    .fetch_one(pool)
    .await
    .expect("table statistics")
}

#[tokio::test(flavor = "multi_thread")]
async fn polls_read_the_standby_and_plans_and_actions_go_to_the_primary() {
    let mut pair = Pair::start().await;
    let job = fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    // What the fixture's own sessions scanned is counted before the baseline.
    pair.reconnect_primary().await;
    let primary_scans = ledger_scans(&pair.primary).await;
    let (primary, standby) = (pair.primary_url(), pair.standby_url());
    let mut console = watch(&primary, &standby, 140);
    console.wait_for("FAILED", 30);
    console.wait_for("standby in sync", 30);
    // Several polls later: the standby served them, the primary none.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while ledger_scans(&pair.standby).await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no poll reached the standby"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        ledger_scans(&pair.primary).await,
        primary_scans,
        "no poll on the primary"
    );
    // The console's sessions on the standby, as pg_stat_activity shows them.
    assert!(
        !Pair::console_statements(&pair.standby).await.is_empty(),
        "the console is connected to the standby"
    );

    // The plan and the action go to the primary (the standby cannot write); the standby
    // stops replaying meanwhile, so the console must wait before showing the new state.
    pair.pause_replay().await;
    console.send("r");
    console.wait_for("will change", 20);
    console.reason_and_yes("parser fixed");
    console.wait_for("retry applied", 20);
    assert_eq!(fixture::audit_count(&pair.primary).await, 1);
    console.wait_for("applied; waiting for the replica", 10);
    pair.resume_replay().await;
    console.wait_for("the standby has replayed it", 15);
    console.send("\x1b");
    console.wait_until("the board with the retried space", 10, |s| {
        s.contains("queued") && !s.contains("FAILED")
    });
    let state: String = sqlx::query_scalar(
        "SELECT run_state FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(job.bootstrap)
    .fetch_one(&pair.primary)
    .await
    .expect("state");
    assert_eq!(state, "queued");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lagging_standby_raises_no_false_alarm_and_a_quiet_primary_hides_no_dead_worker() {
    let pair = Pair::start().await;
    let renewed = fixture::job(
        &pair.primary,
        &JobSpec {
            lease_expires_in_secs: 6,
            heartbeat_ago_secs: 0,
            ..JobSpec::new("acme", "running")
        },
    )
    .await;
    pair.replayed().await;
    pair.pause_replay().await;
    // The worker renews its lease on the primary; the standby does not replay it.
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET lease_expires_at = now() + interval \
         '60 seconds', heartbeat_at = now(), updated_at = now(), row_version = row_version + 1 \
         WHERE id = $1",
    )
    .bind(renewed.bootstrap)
    .execute(&pair.primary)
    .await
    .expect("renew");
    // Past the lease expiry the standby still holds, by its own clock.
    lease_expired_on(&pair.standby, renewed.bootstrap).await;
    let (primary, standby) = (pair.primary_url(), pair.standby_url());
    let status = run(&["status", "--database-url", &primary, "--read-url", &standby]);
    let text = stdout(&status);
    assert!(!text.contains("EXPIRED"), "no false alarm:\n{text}");
    assert!(
        text.contains("read from a standby") && text.contains("behind"),
        "the lag is said:\n{text}\n{}",
        stderr(&status)
    );

    // Scripts read the same from the JSON report.
    let json = run(&[
        "status",
        "--json",
        "--database-url",
        &primary,
        "--read-url",
        &standby,
    ]);
    let document: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let lag = &document["standby"];
    assert_eq!(lag["in_sync"], false, "{lag}");
    assert!(
        lag["lag_seconds"].as_f64().is_some_and(|s| s > 5.0),
        "{lag}"
    );
    assert!(
        lag["wal_bytes_behind"].as_u64().is_some_and(|b| b > 0),
        "{lag}"
    );
    // The live console says the same: the lag in the header, no false alarm on the board.
    let mut console = watch(&primary, &standby, 160);
    let screen = console.wait_for("standby lag", 30);
    assert!(screen.contains("ages as of"), "{screen}");
    assert!(
        !screen.contains("EXPIRED") && !screen.contains("reclaim"),
        "{screen}"
    );
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);

    // Replay resumes; then the worker stops renewing and the primary goes quiet: the lease
    // runs out by the standby's clock although nothing new is replayed.
    pair.resume_replay().await;
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET lease_expires_at = now() + interval \
         '2 seconds', updated_at = now(), row_version = row_version + 1 WHERE id = $1",
    )
    .bind(renewed.bootstrap)
    .execute(&pair.primary)
    .await
    .expect("last renewal");
    pair.replayed().await;
    lease_expired_on(&pair.standby, renewed.bootstrap).await;
    let status = run(&["status", "--database-url", &primary, "--read-url", &standby]);
    let text = stdout(&status);
    // Just expired: watched until the reclaim grace is over.
    assert!(text.contains("reclaim"), "a dead worker shows:\n{text}");
    assert!(text.contains("in sync"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_failover_the_console_finds_the_new_primary_and_acts_on_it_without_a_restart() {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let (both, standby) = (pair.both_url(), pair.standby_url());
    let mut console = watch(&both, &standby, 160);
    console.wait_for("FAILED", 30);
    console.wait_for("standby in sync", 30);

    pair.fail_over().await;
    console.wait_for("primary moved to", 30);
    console.wait_for("STANDBY PROMOTED: polls read the new primary", 30);
    // The plan and the action go to the new primary, in the same console.
    retry_and_quit(&mut console, "after the failover");
    assert_eq!(fixture::audit_count(&pair.standby).await, 1);
}

/// Retries the selected space in `console` with `reason`, sees it applied, and quits.
fn retry_and_quit(console: &mut Console, reason: &str) {
    console.send("r");
    console.wait_for("will change", 20);
    console.reason_and_yes(reason);
    console.wait_for("retry applied", 20);
    console.send("\x1b");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn polls_fall_back_to_the_primary_while_the_standby_is_gone() {
    polls_fall_back_to_the_primary_when(|pair| {
        let standby = pair.sandbox.standby_mut().expect("a standby");
        standby.stop_server().expect("stop the standby");
        None
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn polls_fall_back_to_the_primary_while_the_standby_is_frozen() {
    // Not gone but frozen: its connections stay open and nothing answers on them, so polls
    // time out rather than fail.
    polls_fall_back_to_the_primary_when(|pair| Some(pair.freeze_standby())).await;
}

/// Watches through the standby, loses it with `lose`, and sees polls read the primary
/// meanwhile: the board stays, and a change on the primary shows. What `lose` returns keeps
/// the standby lost until the end (a freeze ends when dropped).
async fn polls_fall_back_to_the_primary_when(lose: impl FnOnce(&mut Pair) -> Option<Frozen>) {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let (primary, standby) = (pair.primary_url(), pair.standby_url());
    let mut console = watch(&primary, &standby, 160);
    console.wait_for("standby in sync", 30);
    let lost = lose(&mut pair);
    let screen = console.wait_for("standby unreachable: polls read the primary", 60);
    assert!(
        screen.contains("FAILED"),
        "the board is still shown:\n{screen}"
    );
    fixture::job(&pair.primary, &JobSpec::new("globex", "failed")).await;
    console.wait_for("globex", 30);
    drop(lost);
    console.send("q");
    assert_eq!(console.wait_exit(20), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn actions_refuse_a_standby_and_find_the_primary_among_listed_hosts() {
    let pair = Pair::start().await;
    let job = fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let space = job.space.to_string();
    let retry = |url: &str| {
        run(&[
            "retry",
            &space,
            "--reason",
            "parser fixed",
            "--yes",
            "--database-url",
            url,
        ])
    };
    let on_standby = retry(&pair.standby_url());
    assert_eq!(on_standby.status.code(), Some(3), "{}", stdout(&on_standby));
    assert!(
        stderr(&on_standby).contains("is a standby (in recovery)"),
        "{}",
        stderr(&on_standby)
    );
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
    // The standby listed first: the primary among the hosts is the one used.
    let (_, hosts) = pair
        .both_url()
        .split_once('@')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .expect("hosts");
    let (list, database) = hosts.split_once('/').expect("a database");
    let (first, second) = list.split_once(',').expect("two hosts");
    let reversed = format!("postgres://postgres@{second},{first}/{database}");
    // The other spellings libpq takes for the same hosts, standby first: each plans on the
    // primary (a dry run on the standby would be refused).
    let (sockets, port) = pair.socket_dirs_standby_first();
    let dry_run = |url: Option<&str>, env: &[(&str, String)]| {
        let mut command = std::process::Command::new(common::cli::BINARY);
        command
            .args(["retry", &space, "--reason", "parser fixed", "--dry-run"])
            .env("LANG", "C.UTF-8")
            .env_remove("DATABASE_URL")
            .env("BOOTSTRAP_CONSOLE_LOG_DIR", common::pty::console_log_dir())
            .envs(env.iter().map(|(k, v)| (*k, v)));
        if let Some(url) = url {
            command.args(["--database-url", url]);
        }
        command.output().expect("run the binary")
    };
    let keyword_value = format!("host={sockets} port={port} dbname=sandbox user=postgres");
    let no_host = format!("postgres://postgres@/sandbox?host={sockets}&port={port}");
    let pghost = [
        ("PGHOST", sockets.clone()),
        ("PGPORT", port.clone()),
        ("PGDATABASE", "sandbox".to_string()),
        ("PGUSER", "postgres".to_string()),
    ];
    for (url, env) in [
        (Some(keyword_value.as_str()), &[][..]),
        (Some(no_host.as_str()), &[][..]),
        (None, &pghost[..]),
    ] {
        let planned = dry_run(url, env);
        assert_eq!(
            planned.status.code(),
            Some(0),
            "{url:?}: {}",
            stderr(&planned)
        );
        assert!(
            stdout(&planned).contains("will change"),
            "{}",
            stdout(&planned)
        );
    }
    // A --read-url listing both, primary first, reads the standby among them.
    // A standby read alone: its lag and how old its data is are unknown, and said so.
    let alone = run(&["status", "--json", "--database-url", &pair.standby_url()]);
    let document: serde_json::Value = serde_json::from_slice(&alone.stdout).expect("JSON");
    let standby = &document["standby"];
    assert_eq!(standby["lag_measured"], false, "{document}");
    assert!(
        standby["lag_seconds"].is_null() && standby["data_as_of"].is_null(),
        "{document}"
    );
    // The report names the primary in use as its target, and the standby it read.
    let read_both = run(&[
        "status",
        "--json",
        "--database-url",
        &reversed,
        "--read-url",
        &pair.both_url(),
    ]);
    let document: serde_json::Value = serde_json::from_slice(&read_both.stdout).expect("JSON");
    assert_eq!(document["standby"]["in_sync"], true, "{document}");
    let (standby_dir, primary_dir) = sockets.split_once(',').expect("two sockets");
    let named =
        |value: &serde_json::Value, dir: &str| value.as_str().is_some_and(|t| t.contains(dir));
    assert!(named(&document["target"], primary_dir), "{document}");
    assert!(
        named(&document["standby"]["target"], standby_dir),
        "{document}"
    );
    let listed = retry(&reversed);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(
        stdout(&listed).contains("retry applied"),
        "{}",
        stdout(&listed)
    );
    assert_eq!(fixture::audit_count(&pair.primary).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn demo_with_a_replica_watches_through_the_standby_and_deletes_both_servers() {
    let mut console = Console::start(
        &[
            "demo",
            "--replica",
            "--tenants",
            "1",
            "--spaces",
            "3",
            "--workers",
            "1",
        ],
        &[],
        160,
        30,
    );
    let screen = console.wait_until("the standby in the header", 60, |s| {
        s.contains("standby in sync") || s.contains("standby lag")
    });
    assert!(screen.contains("SANDBOX"), "{screen}");
    let raw = String::from_utf8_lossy(&console.raw_output()).into_owned();
    let dirs: Vec<String> = raw
        .split("%2F")
        .filter_map(|part| part.strip_prefix("bc-pg-"))
        .filter_map(|rest| rest.split(':').next())
        .map(|name| format!("/tmp/bc-pg-{name}"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(dirs.len(), 2, "a primary and a standby: {dirs:?}");
    console.send("q");
    assert_eq!(console.wait_exit(60), 0);
    for dir in dirs {
        assert!(!std::path::Path::new(&dir).exists(), "{dir} is deleted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_command_can_start_a_standby_and_deletes_both() {
    use sqlx::{ConnectOptions, Connection};
    use std::io::{BufRead, BufReader};
    use std::str::FromStr;

    let mut child = std::process::Command::new(common::cli::BINARY)
        .args(["sandbox", "--replica"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the sandbox");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut urls = (None, None);
    while let Some(Ok(line)) = lines.next() {
        if let Some(url) = line.strip_prefix("DATABASE_URL=") {
            urls.0 = Some(url.to_string());
        }
        if let Some(url) = line.strip_prefix("BOOTSTRAP_CONSOLE_READ_URL=") {
            urls.1 = Some(url.to_string());
            break;
        }
    }
    let (Some(primary), Some(standby)) = urls else {
        panic!("both URLs are printed")
    };
    // Both servers are named, so an operator can find and stop either.
    let mut named = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("a line");
        if line.starts_with("Press Ctrl-C") {
            break;
        }
        named.push(line);
    }
    for start in [
        "server pid",
        "directory",
        "standby server pid",
        "standby directory",
    ] {
        assert!(
            named.iter().any(|l| l.starts_with(start)),
            "{start}: {named:?}"
        );
    }
    let in_recovery = |url: String| async move {
        let mut conn = sqlx::postgres::PgConnectOptions::from_str(&url)
            .expect("url")
            .connect()
            .await
            .expect("connect");
        let answer: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
            .fetch_one(&mut conn)
            .await
            .expect("ask");
        conn.close().await.expect("close");
        answer
    };
    assert!(!in_recovery(primary.clone()).await, "the primary");
    assert!(in_recovery(standby.clone()).await, "a standby");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    assert!(child.wait().expect("exit").success());
    for url in [primary, standby] {
        let dir = url
            .split("%2F")
            .nth(2)
            .and_then(|rest| rest.split(':').next())
            .map(|name| format!("/tmp/{name}"))
            .expect("a socket directory");
        assert!(!std::path::Path::new(&dir).exists(), "{dir} is deleted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_plans_on_the_primary_not_on_the_standby_copy() {
    let pair = Pair::start().await;
    let job = fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    let mine = fixture::job(&pair.primary, &JobSpec::new("globex", "failed")).await;
    pair.replayed().await;
    pair.pause_replay().await;
    // Someone retries it on the primary; the standby does not replay that.
    let (primary, standby) = (pair.primary_url(), pair.standby_url());
    let space = job.space.to_string();
    let elsewhere = run(&[
        "retry",
        &space,
        "--reason",
        "someone else",
        "--yes",
        "--database-url",
        &primary,
    ]);
    assert_eq!(elsewhere.status.code(), Some(0), "{}", stderr(&elsewhere));
    let mut console = watch(&primary, &standby, 160);
    console.wait_for("FAILED", 30);
    console.send("/acme\r");
    console.wait_until("the board narrowed to acme", 10, |s| s.contains(" 1 of "));
    console.send("r");
    // Who did it comes from the audit log on the primary.
    let dialog = console.wait_for("(audit record 1) since you looked", 20);
    assert!(dialog.contains("was retried by root on"), "{dialog}");
    console.send("\x1b");

    // The console's own retry, which the lagging board does not show yet, reads as its own.
    console.send("/");
    console.send(&"\x7f".repeat(8));
    console.send("globex\r");
    console.wait_until("the board narrowed to globex", 10, |s| {
        s.contains(" 1 of ") && s.contains("globex")
    });
    console.send("r");
    console.wait_for("will change", 20);
    console.reason_and_yes("mine");
    console.wait_for("retry applied", 20);
    console.send("\x1b");
    console.wait_until("the dialog closed", 10, |s| !s.contains("retry applied"));
    console.send("r");
    console.wait_for("was retried by this console (audit record 2)", 20);
    console.send("\x1b");
    // Past the bounded wait the console still says the board shows the state before, until
    // the standby has it.
    console.wait_for(
        "not on the standby yet (the board shows the state before)",
        30,
    );
    pair.resume_replay().await;
    console.wait_for("the standby has replayed it", 20);
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
    assert_eq!(fixture::audit_count(&pair.primary).await, 2);
    let _ = mine;
}

/// Recovery conflicts on the standby cancel the console's reads (the primary takes exclusive
/// locks on the ledger tables in bursts, and the standby is told to cancel at once rather than
/// wait): every read — polls, the detail, the leases, the audit log, the summary and the
/// report's pages — is read again and succeeds, and the standby counts the conflicts it caused.
#[tokio::test(flavor = "multi_thread")]
async fn reads_cancelled_by_recovery_conflicts_are_read_again() {
    use bootstrap_console::domain::report::{self, ReportFilter, Rows};
    use bootstrap_console::domain::session::{Session, SessionOptions};
    use bootstrap_console::domain::signals::Thresholds;
    use bootstrap_console::store::connect::Target;

    let mut pair = Pair::start().await;
    let job = fixture::job(&pair.primary, &JobSpec::new("acme", "running")).await;
    fixture::job(&pair.primary, &JobSpec::new("globex", "failed")).await;
    fixture::lease(&pair.primary, "acme", job.space, 30).await;
    pair.replayed().await;
    pair.cancel_conflicts_at_once().await;
    let conflicts_before = pair.standby_lock_conflicts().await;

    let target = |url: &str| Target::from_url_or_env(Some(url)).expect("url");
    let mut session = Session::open(&target(&pair.primary_url()), SessionOptions::default())
        .await
        .expect("open");
    session
        .add_reader(&target(&pair.standby_url()))
        .await
        .expect("the standby");

    let locking = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let locker = tokio::spawn(lock_in_bursts(pair.primary.clone(), locking.clone()));
    let thresholds = Thresholds::default();
    let started = std::time::Instant::now();
    let mut rounds = 0;
    while started.elapsed() < Duration::from_secs(5) {
        rounds += 1;
        let fleet = session
            .reads()
            .load_fleet(thresholds)
            .await
            .expect("a poll");
        assert_eq!(fleet.len(), 2);
        let detail = session
            .reads()
            .detail(job.bootstrap)
            .await
            .expect("the detail");
        assert!(detail.is_some());
        session.reads().leases().await.expect("the leases");
        session
            .reads()
            .recent_audit(10)
            .await
            .expect("the audit log");
        let summary = report::summarize(&session, &thresholds)
            .await
            .expect("the summary");
        let mut pages = Rows::new(
            &session,
            summary.db_now,
            &ReportFilter::default(),
            &thresholds,
        )
        .page_size(1)
        .prefetch();
        let mut listed = 0;
        while let Some(page) = pages.next().await {
            listed += page.expect("a page").len();
        }
        assert_eq!(listed, 2);
        session.reads().names().await.expect("the ids");
    }
    locking.store(false, std::sync::atomic::Ordering::Relaxed);
    let locks = locker.await.expect("the locker");
    session.close().await;
    assert!(locks > 0, "the primary took no lock");
    // The standby counts what its replay cancelled (flushed as the sessions end).
    let caused = pair.settled_lock_conflicts(conflicts_before).await;
    assert!(
        caused > 0,
        "no read was cancelled in {rounds} rounds against {locks} locks: nothing was tested"
    );
}

/// Takes exclusive locks on the three ledger tables on the primary, one transaction after
/// another for 300 ms, then rests 300 ms, while `on`; returns how many it took.
async fn lock_in_bursts(
    primary: sqlx::PgPool,
    on: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> u64 {
    let mut locks = 0;
    while on.load(std::sync::atomic::Ordering::Relaxed) {
        let burst = std::time::Instant::now();
        while burst.elapsed() < Duration::from_millis(300) {
            let mut tx = primary.begin().await.expect("begin");
            sqlx::query(
                "LOCK TABLE legacy_space_publication_bootstraps, \
                 legacy_space_publication_bootstrap_items, knowledge_space_mutation_leases \
                 IN ACCESS EXCLUSIVE MODE",
            )
            .execute(&mut *tx)
            .await
            .expect("lock");
            tx.commit().await.expect("commit");
            locks += 1;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    locks
}

/// A console started on the standby alone is read-only; once that standby is promoted, the
/// same console says so and acts on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_console_read_only_on_a_standby_acts_once_that_standby_is_promoted() {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let standby = pair.standby_url();
    let mut console = Console::start(&["watch", "--database-url", &standby], &[], 160, 30);
    let screen = console.wait_for("FAILED", 30);
    assert!(screen.contains("READ-ONLY"), "{screen}");
    console.send("r");
    console.wait_for(
        "retry is not possible: the database is a read-only standby",
        10,
    );

    pair.fail_over().await;
    let screen = console.wait_for("the database is a primary now: actions are allowed", 30);
    assert!(screen.contains("READ-WRITE"), "{screen}");
    retry_and_quit(&mut console, "after the promotion");
    assert_eq!(fixture::audit_count(&pair.standby).await, 1);
}

/// A console acting on one primary and polling its standby: once the standby is promoted,
/// the old primary — even back up without fencing — is never acted on, since its writes
/// would be lost to the new timeline.
#[tokio::test(flavor = "multi_thread")]
async fn once_the_polled_standby_is_promoted_the_old_primary_is_not_acted_on() {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let (primary, standby) = (pair.primary_url(), pair.standby_url());
    let mut console = watch(&primary, &standby, 200);
    console.wait_for("standby in sync", 30);

    pair.fail_over().await;
    pair.sandbox
        .cluster_mut()
        .start_server()
        .expect("the old primary, back without fencing");
    let screen = console.wait_for(
        "read-only: old primary? the polled standby was promoted",
        30,
    );
    assert!(
        screen.contains("READ-ONLY") && screen.contains("STANDBY PROMOTED"),
        "{screen}"
    );
    console.send("r");
    console.wait_for("retry is not possible: old primary?", 10);
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
    pair.reconnect_primary().await;
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
    assert_eq!(fixture::audit_count(&pair.standby).await, 0);
}

/// A `--read-url` standby that is down when `watch` starts: the console starts on the primary
/// and says so, as it does for a standby lost later, and moves its polls to the standby once
/// it answers and has caught up.
#[tokio::test(flavor = "multi_thread")]
async fn a_standby_down_at_start_is_waited_for_and_polls_move_to_it_once_it_answers() {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    pair.standby.close().await;
    let standby = pair.sandbox.standby_mut().expect("a standby");
    tokio::task::block_in_place(|| standby.stop_server()).expect("stop the standby");
    let (primary, standby_url) = (pair.primary_url(), pair.standby_url());
    let mut console = watch(&primary, &standby_url, 140);
    let screen = console.wait_for("FAILED", 30);
    let screen = if screen.contains("does not answer") {
        screen
    } else {
        console.wait_for("does not answer", 10)
    };
    assert!(screen.contains("READ-WRITE"), "{screen}");
    let standby = pair.sandbox.standby_mut().expect("a standby");
    tokio::task::block_in_place(|| standby.start_server()).expect("start the standby");
    console.wait_for("standby in sync", 60);
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

/// The split-brain guard on a real pair: the standby promoted, the old primary restarted
/// without fencing. Every host the URL lists is asked before a write; two primaries are
/// refused (exit 10) with each one's timeline, WAL position and start time, and nothing is
/// written anywhere. `--primary` writes to the named host, audited as forced; the timeline
/// written to is remembered, so the old primary reached alone later is refused too.
#[tokio::test(flavor = "multi_thread")]
async fn the_cli_refuses_two_primaries_and_an_old_timeline_and_primary_forces_its_way() {
    let mut pair = Pair::start().await;
    let job = fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let both = pair.both_url();
    pair.fail_over().await;
    pair.restart_old_primary_unfenced().await;
    let space = job.space.to_string();
    // A state directory of this test's own: what it remembers is its own.
    let state = tempfile::tempdir().expect("state");
    let state = state.path().to_string_lossy().into_owned();
    let in_state = |args: &[&str]| {
        common::cli::run_with_env(args, &[("BOOTSTRAP_CONSOLE_LOG_DIR", state.as_str())])
    };
    let retry = |url: &str, extra: &[&str]| {
        let mut args = vec![
            "retry",
            &space,
            "--reason",
            "parser fixed",
            "--yes",
            "--database-url",
            url,
        ];
        args.extend(extra);
        in_state(&args)
    };

    let refused = retry(&both, &[]);
    let said = stderr(&refused);
    assert_eq!(
        refused.status.code(),
        Some(10),
        "{said}{}",
        stdout(&refused)
    );
    let (sockets, port) = pair.socket_dirs_standby_first();
    let (new_primary, old_primary) = sockets.split_once(',').expect("two hosts");
    for part in [
        "split brain? 2 listed hosts answer as primaries".to_string(),
        format!("{old_primary}:{port} timeline 00000001, WAL "),
        format!("{new_primary}:{port} timeline 00000002, WAL "),
        "up since ".to_string(),
        "nothing was written".to_string(),
        "--primary HOST".to_string(),
    ] {
        assert!(said.contains(&part), "{part:?} in {said}");
    }
    // A dry run writes nothing: it shows its plan beside the refusal, and exits 10.
    let dry = in_state(&[
        "retry",
        &space,
        "--reason",
        "x",
        "--dry-run",
        "--database-url",
        &both,
    ]);
    assert_eq!(dry.status.code(), Some(10), "{}", stderr(&dry));
    let said = stdout(&dry);
    assert!(
        said.contains("dry run: nothing would be applied — split brain?")
            && said.contains("1 would be applied"),
        "{said}"
    );
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
    assert_eq!(fixture::audit_count(&pair.standby).await, 0);

    // The operator's way through: the named host is written to, and the record says forced.
    // Reads go on, from the primary in use, and say it is in doubt.
    let status = in_state(&["status", "--database-url", &both]);
    assert!(
        stderr(&status).contains("while the primary is in doubt — split brain?"),
        "{}",
        stderr(&status)
    );
    let named = format!("{new_primary}:{port}");
    let forced = retry(&both, &["--primary", &named]);
    assert_eq!(
        forced.status.code(),
        Some(0),
        "{}{}",
        stdout(&forced),
        stderr(&forced)
    );
    assert!(
        stderr(&forced).contains(&format!("written to {named} as forced (--primary)"))
            && stderr(&forced).contains("past the split-brain guard: split brain?"),
        "{}",
        stderr(&forced)
    );
    assert_eq!(
        fixture::audit_outcomes(&pair.standby).await,
        ["applied_primary_forced"]
    );
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
    let timelines = std::fs::read_to_string(std::path::Path::new(&state).join("timelines"))
        .expect("the timeline written to is kept");
    assert!(timelines.ends_with(" 00000002\n"), "{timelines}");
    // A host the URL does not list is a usage error, before anything is asked.
    let unlisted = retry(&both, &["--primary", "/nowhere:5432"]);
    assert_eq!(unlisted.status.code(), Some(2), "{}", stderr(&unlisted));

    // Timeline 2 was written to: the old primary, reached through a URL naming it alone (as a
    // virtual IP that moved back would), is refused although it is the only primary asked.
    let alone = retry(&pair.primary_url(), &[]);
    let said = stderr(&alone);
    assert_eq!(alone.status.code(), Some(10), "{said}{}", stdout(&alone));
    assert!(
        said.contains("old primary?")
            && said.contains(&format!("{old_primary}:{port} timeline 00000001"))
            && said.contains("this console has written to timeline 00000002"),
        "{said}"
    );
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
}

/// The live console follows a failover, and when the old primary comes back unfenced it
/// refuses to plan an action: the dialog names both primaries.
#[tokio::test(flavor = "multi_thread")]
async fn the_live_console_refuses_to_act_once_an_old_primary_comes_back() {
    let mut pair = Pair::start().await;
    fixture::job(&pair.primary, &JobSpec::new("acme", "failed")).await;
    pair.replayed().await;
    let both = pair.both_url();
    let mut console = Console::start(&["watch", "--database-url", &both], &[], 160, 30);
    console.wait_for("FAILED", 30);

    pair.fail_over().await;
    console.wait_for("primary moved to", 40);
    // A dialog planned while one primary answers; the old one comes back before it is applied:
    // the check right before writing refuses it.
    console.send("r");
    console.wait_for("will change", 20);
    pair.restart_old_primary_unfenced().await;
    console.reason_and_yes("after the failover");
    let screen = console.wait_for("split brain? 2 listed hosts answer as primaries", 20);
    assert!(
        screen.contains("not applied") || screen.contains("refused"),
        "{screen}"
    );
    console.send("\x1b");
    // A new dialog is refused at once, naming both primaries.
    console.send("r");
    let screen = console.wait_for("could not plan: split brain?", 20);
    assert!(screen.contains("timeline 00000002"), "{screen}");
    // Without a key: the guard's own look turns the header read-only, the doubt its reason.
    console.send("\x1b");
    let screen = console.wait_for("read-only: split brain?", 40);
    assert!(screen.contains("READ-ONLY: PRIMARY IN DOUBT"), "{screen}");
    console.send("\x1b");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
    assert_eq!(fixture::audit_count(&pair.primary).await, 0);
    assert_eq!(fixture::audit_count(&pair.standby).await, 0);
}
