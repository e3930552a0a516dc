//! The read model against a real PostgreSQL: signals and attention order on the database clock,
//! the detail view, query plans on a large ledger, capabilities and session hygiene.

use crate::common;

use bootstrap_console::domain::model::{Checkpoint, ItemStatus, RunState};
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::{Attention, Group, Thresholds};
use bootstrap_console::store::db::TxKind;
use bootstrap_console::store::read;
use bootstrap_console::store::schema;
use bootstrap_console::topology::OpenError;
use common::TestDb;
use common::fixture::{self, JobSpec};

/// Makes the database's `now()` run three hours ahead of every real clock, for new sessions on
/// this database: unqualified `now()` resolves to `fake_clock.now()` first.
async fn skew_database_clock(db: &TestDb) {
    sqlx::raw_sql(
        "CREATE SCHEMA fake_clock; \
         CREATE FUNCTION fake_clock.now() RETURNS timestamptz LANGUAGE sql STABLE \
           AS $$ SELECT pg_catalog.now() + interval '3 hours' $$;",
    )
    .execute(&db.pool)
    .await
    .expect("fake clock");
    let sql = format!(
        "ALTER DATABASE \"{}\" SET search_path = fake_clock, pg_catalog, public",
        db.name
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&db.pool)
        .await
        .expect("search_path");
}

#[tokio::test]
async fn signals_and_attention_order_follow_the_database_clock() {
    let db = TestDb::migrated().await;
    skew_database_clock(&db).await;
    // Fixtures are written through fresh sessions, so their now() is the skewed one too.
    let writer = db.fresh_pool().await;
    let spec = |state| JobSpec::new("tenant-a", state);
    let failed = fixture::job(&writer, &spec("failed")).await;
    let blocked = fixture::job(&writer, &spec("queued")).await;
    fixture::lease(&writer, "tenant-a", blocked.space, 20 * 60).await;
    let expired = fixture::job(
        &writer,
        &JobSpec {
            lease_expires_in_secs: -120,
            heartbeat_ago_secs: 150,
            ..spec("running")
        },
    )
    .await;
    // Just expired: a live worker reclaims it within the grace.
    let reclaiming = fixture::job(
        &writer,
        &JobSpec {
            lease_expires_in_secs: -10,
            heartbeat_ago_secs: 40,
            ..spec("running")
        },
    )
    .await;
    // A writer at work: a young lease at `pending_snapshot`.
    let writing = fixture::job(&writer, &spec("queued")).await;
    fixture::lease(&writer, "tenant-a", writing.space, 60).await;
    let stuck = fixture::job(
        &writer,
        &JobSpec {
            updated_ago_secs: 11 * 60,
            ..spec("queued")
        },
    )
    .await;
    let late = fixture::job(
        &writer,
        &JobSpec {
            lease_expires_in_secs: 5,
            heartbeat_ago_secs: 25,
            ..spec("running")
        },
    )
    .await;
    let running = fixture::job(
        &writer,
        &JobSpec {
            lease_expires_in_secs: 29,
            heartbeat_ago_secs: 1,
            ..spec("running")
        },
    )
    .await;
    let queued = fixture::job(&writer, &spec("queued")).await;
    let canceled = fixture::job(&writer, &spec("canceled")).await;
    let succeeded = fixture::job(&writer, &spec("succeeded")).await;
    // A young lease on a running space: not blocking (already captured), not an orphan.
    fixture::lease(&writer, "tenant-a", running.space, 60).await;

    let session = db.session(SessionOptions::default()).await;
    let mut fleet = session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("board");
    let board = fleet.snapshot().expect("a snapshot");
    let local_now = chrono::Utc::now();
    assert!(
        board.db_now - local_now > chrono::Duration::minutes(170),
        "the database clock really is ahead"
    );
    let now = board.db_now;
    let shown: Vec<_> = board.board.window(0, board.board.len()).collect();

    let order: Vec<_> = shown.iter().map(|r| r.id).collect();
    let expected = [
        &failed,
        &blocked,
        &expired,
        &stuck,
        &reclaiming,
        &late,
        &writing,
        &running,
        &queued,
        &canceled,
        &succeeded,
    ]
    .map(|j| j.bootstrap)
    .to_vec();
    assert_eq!(
        order, expected,
        "the domain contract §2 (crate::domain) attention order"
    );
    let attention: Vec<_> = shown.iter().map(|r| r.signals.attention).collect();
    assert_eq!(attention, Attention::ALL.to_vec());

    let row = |id| board.row(&id).expect("row");
    assert!(row(failed.bootstrap).signals.failed);
    let blocked_row = row(blocked.bootstrap);
    assert!(blocked_row.signals.blocked_by_lease && blocked_row.signals.lease_orphan_suspect);
    let age = blocked_row.lease_age(now).expect("lease age");
    assert!(
        (age.num_seconds() - 1200).abs() < 30,
        "lease age on the db clock: {age}"
    );
    let expired_row = row(expired.bootstrap);
    assert!(expired_row.signals.lease_expired && !expired_row.signals.heartbeat_late);
    assert!(
        expired_row
            .lease_remaining(now)
            .expect("remaining")
            .num_seconds()
            <= -9
    );
    assert!(row(stuck.bootstrap).signals.stuck);
    assert!(row(late.bootstrap).signals.heartbeat_late);
    let healthy = row(running.bootstrap);
    assert!(!healthy.signals.heartbeat_late && !healthy.signals.lease_expired);
    assert!(!healthy.signals.blocked_by_lease && !healthy.signals.lease_orphan_suspect);
    assert!(row(succeeded.bootstrap).signals.readable);

    let summary = &board.summary;
    assert_eq!(summary.spaces, 11);
    assert_eq!(summary.readable, 1);
    assert_eq!(
        summary.in_state(Checkpoint::PendingSnapshot, RunState::Queued),
        4
    );
    assert_eq!(
        summary.in_state(Checkpoint::Rebuilding, RunState::Running),
        4
    );
    assert_eq!(summary.in_group(Group::NeedsOperator), 4);
    assert_eq!(summary.in_group(Group::Watch), 3);
    assert_eq!(summary.spaces_uncaptured, 4);
}

#[tokio::test]
async fn the_detail_shows_items_failures_the_running_item_the_lease_and_audit() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let failed = fixture::job(
        &db.pool,
        &JobSpec {
            items: vec!["succeeded", "failed", "failed", "pending"],
            ..JobSpec::new("tenant-a", "failed")
        },
    )
    .await;
    fixture::lease(&db.pool, "tenant-a", failed.space, 30).await;
    let running = fixture::job(&db.pool, &JobSpec::new("tenant-a", "running")).await;
    bootstrap_console::domain::actions::apply(
        &session,
        &bootstrap_console::domain::actions::Action::cancel(
            fixture::seen(&db.pool, running.bootstrap).await,
            bootstrap_console::domain::actions::RequestId::new(),
        ),
        "maintenance window",
    )
    .await
    .expect("cancel");

    let detail = session
        .reads()
        .detail(failed.bootstrap)
        .await
        .expect("detail")
        .expect("exists");
    assert_eq!(detail.count(ItemStatus::Succeeded), 1);
    assert_eq!(detail.count(ItemStatus::Failed), 2);
    assert_eq!(detail.count(ItemStatus::Pending), 1);
    assert_eq!(detail.failed_items.len(), 2);
    assert_eq!(detail.failed_items[0].ordinal, 1, "lowest ordinal first");
    assert_eq!(
        detail.failed_items[0].last_error.as_deref(),
        Some("compiler exited 1")
    );
    assert!(detail.running_item.is_none());
    assert!(detail.lease.is_some());
    assert_eq!(
        detail.audit.as_ref().expect("audit table").len(),
        0,
        "no action on this space"
    );

    let canceled = session
        .reads()
        .detail(running.bootstrap)
        .await
        .expect("detail")
        .expect("exists");
    assert_eq!(canceled.running_item.as_ref().map(|i| i.ordinal), Some(1));
    let audit = canceled.audit.expect("audit table");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].action, "cancel");
    assert_eq!(audit[0].reason, "maintenance window");
    assert_eq!(
        session.reads().recent_audit(10).await.expect("audit").len(),
        1
    );
    assert!(
        session
            .reads()
            .detail(uuid::Uuid::new_v4())
            .await
            .expect("detail")
            .is_none()
    );
}

#[tokio::test]
async fn on_fifty_thousand_items_the_detail_uses_their_indexes() {
    let db = TestDb::migrated().await;
    // 100 spaces of 500 items each: one bootstrap's items are a small share of the table.
    for _ in 0..100 {
        fixture::space(&db.pool, "tenant-big").await;
    }
    sqlx::raw_sql(
        "INSERT INTO legacy_space_publication_bootstraps (id, tenant_id, knowledge_space_id, \
           idempotency_key, checkpoint, run_state, total_documents, completed_documents, \
           row_version, snapshot_metadata, created_at, updated_at) \
         SELECT id, tenant_id, id, 'legacy-space-publication-bootstrap-v1', 'rebuilding', \
                'queued', 500, 250, 1, '{}'::jsonb, now(), now() \
         FROM knowledge_spaces WHERE tenant_id = 'tenant-big'; \
         INSERT INTO legacy_space_publication_bootstrap_items (bootstrap_id, document_asset_id, \
           document_version, document_sha256, ordinal, status, last_error, created_at, updated_at) \
         SELECT b.id, gen_random_uuid(), 1, repeat('b', 64), n, \
                CASE WHEN n < 250 THEN 'succeeded' WHEN n = 250 THEN 'failed' ELSE 'pending' END, \
                CASE WHEN n = 250 THEN 'boom' END, now(), now() \
         FROM legacy_space_publication_bootstraps b, generate_series(0, 499) n; \
         ANALYZE;",
    )
    .execute(&db.pool)
    .await
    .expect("large ledger");
    let items: i64 =
        sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstrap_items")
            .fetch_one(&db.pool)
            .await
            .expect("count");
    assert!(items >= 50_000);
    let session = db.session(SessionOptions::default()).await;
    let layout = *session.topology().primary().layout();
    let some_bootstrap: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM legacy_space_publication_bootstraps LIMIT 1")
            .fetch_one(&db.pool)
            .await
            .expect("id");

    let detail_plan = explain(&db, &read::detail_sql(&layout), Some(some_bootstrap)).await;
    assert!(
        !detail_plan.contains("Seq Scan on legacy_space_publication_bootstrap_items"),
        "the detail must not scan items:\n{detail_plan}"
    );
    assert!(
        detail_plan.contains("legacy_space_bootstrap_items_next_idx"),
        "the detail uses the seed's item index:\n{detail_plan}"
    );
    // And the queries really return the data.
    let fleet = session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("board");
    assert_eq!(fleet.len(), 100);
    let detail = session
        .reads()
        .detail(some_bootstrap)
        .await
        .expect("detail")
        .expect("exists");
    assert_eq!(detail.count(ItemStatus::Succeeded), 250);
    assert_eq!(detail.failed_items.len(), 1);
}

async fn explain(db: &TestDb, sql: &str, id: Option<uuid::Uuid>) -> String {
    let statement = format!("EXPLAIN {sql}");
    let query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(statement));
    let query = match id {
        Some(id) => query.bind(id).bind(None::<String>),
        None => query.bind(None::<String>),
    };
    query.fetch_all(&db.pool).await.expect("explain").join("\n")
}

#[tokio::test]
async fn a_database_without_the_ledger_is_a_clear_error_naming_what_is_missing() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let error = Session::open(&db.target(), SessionOptions::default())
        .await
        .err()
        .expect("no ledger, no session");
    assert!(matches!(error, OpenError::MissingLedger { .. }));
    let text = error.to_string();
    for table in [
        "legacy_space_publication_bootstraps",
        "legacy_space_publication_bootstrap_items",
        "knowledge_space_mutation_leases",
    ] {
        assert!(text.contains(table), "{text}");
    }
    assert!(text.contains("migration 0009"), "{text}");
}

#[tokio::test]
async fn a_role_without_write_grants_gets_a_read_only_session_that_says_why() {
    let db = TestDb::migrated().await;
    let role = format!("observer_{}", &db.name);
    let grants = format!(
        "CREATE ROLE \"{role}\" LOGIN PASSWORD 'observer-pw'; \
         GRANT USAGE ON SCHEMA bootstrap_console TO \"{role}\"; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{role}\"; \
         GRANT SELECT ON ALL TABLES IN SCHEMA bootstrap_console TO \"{role}\";"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(grants))
        .execute(&db.pool)
        .await
        .expect("observer role");
    let target = bootstrap_console::store::connect::Target::from_options(
        db.options().username(&role).password("observer-pw"),
    );
    let session = Session::open(&target, SessionOptions::default())
        .await
        .expect("open");
    let reason = session
        .topology()
        .access()
        .clone()
        .read_only_reason()
        .expect("read-only")
        .to_string();
    assert!(reason.contains(&role), "{reason}");
    assert!(
        reason.contains("EXECUTE on function bootstrap_console.retry_bootstrap"),
        "{reason}"
    );
    // It can still watch.
    session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("an observer reads the board");
    let drop = format!("DROP OWNED BY \"{role}\"; DROP ROLE \"{role}\"");
    drop_role_later(&db, drop);
}

/// Roles are server-wide: drop it once the session's connections are gone.
fn drop_role_later(db: &TestDb, sql: String) {
    let options = db.options();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        runtime.block_on(async {
            use sqlx::ConnectOptions;
            for _ in 0..50 {
                if let Ok(mut conn) = options.connect().await
                    && sqlx::raw_sql(sqlx::AssertSqlSafe(sql.clone()))
                        .execute(&mut conn)
                        .await
                        .is_ok()
                {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        });
    })
    .join()
    .expect("drop role");
}

#[tokio::test]
async fn console_sessions_identify_themselves_time_out_and_read_read_only() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let topology = session.topology();
    let mut tx = topology
        .primary()
        .begin(TxKind::Read)
        .await
        .expect("a read transaction");
    let (app, timeout, lock, idle, read_only): (String, String, String, String, String) =
        sqlx::query_as(
            "SELECT current_setting('application_name'), current_setting('statement_timeout'), \
                current_setting('lock_timeout'), \
                current_setting('idle_in_transaction_session_timeout'), \
                current_setting('transaction_read_only')",
        )
        .fetch_one(&mut *tx)
        .await
        .expect("settings");
    // Each transaction carries its limits (no startup parameters, which a pooler refuses).
    assert_eq!(app, "bootstrap-console");
    assert_eq!(timeout, "10s");
    assert_eq!(lock, "5s");
    assert_eq!(idle, "1min");
    assert_eq!(read_only, "on", "reads run in read-only transactions");
    let write = sqlx::query("DELETE FROM knowledge_space_mutation_leases")
        .execute(&mut *tx)
        .await;
    let error = write.expect_err("a read on the console's sessions cannot write");
    drop(tx);
    assert!(
        error.to_string().contains("read-only transaction"),
        "{error}"
    );
    let visible: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE application_name = 'bootstrap-console' AND datname = current_database()",
    )
    .fetch_one(&db.pool)
    .await
    .expect("pg_stat_activity");
    assert!(
        visible >= 1,
        "a DBA can find the console in pg_stat_activity"
    );
}

#[tokio::test]
async fn an_impossible_row_is_reported_not_hidden_and_not_a_panic() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    // A database whose constraint was dropped by hand lets a future state in.
    fixture::force_run_state(&db.pool, job.bootstrap, "paused\u{1b}[2J").await;
    let session = db.session(SessionOptions::default()).await;
    let board = session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("board")
        .snapshot()
        .expect("a snapshot");
    assert_eq!(board.rows.len(), 1, "the readable row is still shown");
    assert_eq!(board.problems.len(), 1);
    let problem = board.problems[0].to_string();
    assert!(problem.contains(&job.bootstrap.to_string()) && problem.contains("unknown run_state"));
    assert!(
        !problem.contains('\u{1b}'),
        "the hostile value is escaped: {problem}"
    );
}

#[tokio::test]
async fn a_bootstrap_is_found_by_its_own_id_or_by_its_space_id() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    // Markers reuse the space id; a platform may also have given the job an id of its own.
    let own_id = uuid::Uuid::new_v4();
    sqlx::query("UPDATE legacy_space_publication_bootstraps SET id = $2 WHERE id = $1")
        .bind(job.bootstrap)
        .bind(own_id)
        .execute(&db.pool)
        .await
        .expect("own id");
    let session = db.session(SessionOptions::default()).await;
    let by_space = session
        .reads()
        .find_bootstrap(job.space)
        .await
        .expect("read");
    let by_id = session.reads().find_bootstrap(own_id).await.expect("read");
    assert_eq!(by_space.as_ref().map(|b| b.id), Some(own_id));
    assert_eq!(by_id.map(|b| b.knowledge_space_id), Some(job.space));
    assert!(
        session
            .reads()
            .find_bootstrap(uuid::Uuid::new_v4())
            .await
            .expect("read")
            .is_none()
    );
}
