//! The incremental read model against a real PostgreSQL: after every poll, the model kept
//! current by deltas and resync slices equals a full fetch of the ledger judged at the same
//! instant — under random writes, rows stamped behind the database clock, deletions and new
//! rows. And every poll statement uses an index or a TID range, never a sequential scan of the
//! bootstrap table.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use bootstrap_console::domain::board::{BoardQuery, BoardRow, Quick, SortKey, Summary};
use bootstrap_console::domain::fleet::{Fleet, FleetSnapshot};
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::{Signals, Thresholds};
use bootstrap_console::store::Db;
use bootstrap_console::store::db::TxKind;
use bootstrap_console::store::sync::{LedgerSync, SyncReport, SyncSettings};
use chrono::{DateTime, Utc};
use common::TestDb;
use common::fixture::{self, JobSpec};
use sqlx::PgPool;
use uuid::Uuid;

/// A small deterministic random source (xorshift), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
}

const SLACK: Duration = Duration::from_secs(5);
const TENANTS: [&str; 4] = ["acme", "globex", "initech", "umbrella"];
const STATES: [&str; 5] = ["queued", "running", "succeeded", "failed", "canceled"];

/// Thresholds short enough that time-driven signals change while the test runs.
fn thresholds() -> Thresholds {
    Thresholds {
        stuck_after: chrono::Duration::seconds(4),
        orphan_after: chrono::Duration::seconds(3),
        ..Thresholds::default()
    }
}

/// Everything the board shows and judges about a row (not its progress history, which only
/// a model that watched can have).
#[derive(Debug, Clone, PartialEq)]
struct Judged {
    id: Uuid,
    tenant: String,
    space: Uuid,
    state: String,
    total: i32,
    completed: i32,
    worker: Option<(String, DateTime<Utc>, DateTime<Utc>)>,
    error: Option<(String, String)>,
    row_version: i32,
    updated_at: DateTime<Utc>,
    completed_at: Option<DateTime<Utc>>,
    lease: Option<(Uuid, DateTime<Utc>)>,
    signals: Signals,
}

fn judged(row: &BoardRow) -> Judged {
    Judged {
        id: row.id,
        tenant: row.tenant.to_string(),
        space: row.space,
        state: format!("{}@{}", row.run_state, row.checkpoint),
        total: row.total,
        completed: row.completed,
        worker: row
            .worker
            .as_ref()
            .map(|w| (w.worker_id.to_string(), w.expires_at, w.heartbeat_at)),
        error: row.error_code.as_ref().map(|c| {
            (
                c.to_string(),
                row.error_message.as_deref().unwrap_or("").to_string(),
            )
        }),
        row_version: row.row_version,
        updated_at: row.updated_at,
        completed_at: row.completed_at,
        lease: row.lease.as_ref().map(|l| (l.id, l.acquired_at)),
        signals: row.signals,
    }
}

/// The board in order, with the rows of `except` left out.
fn board(snapshot: &FleetSnapshot, except: &HashMap<Uuid, (u32, i64)>) -> Vec<Judged> {
    let view = &snapshot.board;
    view.window(0, view.len())
        .filter(|r| !except.contains_key(&r.id))
        .map(|r| judged(&r))
        .collect()
}

fn without_rates(summary: &Summary) -> Summary {
    Summary {
        documents_per_minute: None,
        eta: None,
        ..summary.clone()
    }
}

/// The whole ledger read afresh, ordered and filtered by `query`, and judged at `now`.
async fn full_fetch(session: &Session, now: DateTime<Utc>, query: &BoardQuery) -> FleetSnapshot {
    let mut sync = session.ledger_sync(SyncSettings::default());
    let mut changes = session
        .reads()
        .sync(&mut sync, Duration::from_secs(1))
        .await
        .expect("full fetch");
    changes.db_now = now;
    let mut fleet = Fleet::new(thresholds());
    fleet.set_query(query.clone());
    fleet.apply(changes);
    fleet.snapshot().expect("a snapshot")
}

/// A random order and filter for the board.
fn random_query(rng: &mut Rng) -> BoardQuery {
    let quick = Quick::cycle();
    BoardQuery {
        sort: SortKey::ALL[rng.below(4) as usize],
        reverse: rng.chance(0.3),
        quick: quick[rng.below(quick.len() as u64) as usize],
        text: ["", "", "acme", "glob", "7", "-4", "compile"][rng.below(7) as usize].into(),
        tenant: rng
            .chance(0.2)
            .then(|| TENANTS[rng.below(4) as usize].into()),
    }
}

/// A random job in any state, stamped up to four seconds behind the database clock.
async fn new_job(pool: &PgPool, rng: &mut Rng) {
    let state = STATES[rng.below(5) as usize];
    let tenant = TENANTS[rng.below(4) as usize];
    let spec = JobSpec {
        updated_ago_secs: rng.below(4) as i64,
        lease_expires_in_secs: 1 + rng.below(6) as i64,
        heartbeat_ago_secs: rng.below(3) as i64,
        row_version: 1 + rng.below(20) as i32,
        ..JobSpec::new(tenant, state)
    };
    let job = fixture::job(pool, &spec).await;
    if rng.chance(0.15) {
        fixture::lease(pool, tenant, job.space, rng.below(6) as i64).await;
    }
}

const BOOTSTRAPS: &str = "legacy_space_publication_bootstraps";

/// A row matching `condition`, chosen by the random source.
async fn pick(pool: &PgPool, rng: &mut Rng, condition: &str) -> Option<Uuid> {
    let sql = format!(
        "SELECT id FROM {BOOTSTRAPS} b WHERE {condition} ORDER BY md5(id::text || $1) LIMIT 1"
    );
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(rng.next().to_string())
        .fetch_optional(pool)
        .await
        .expect("pick a row")
}

/// Applies `set` to one row matching `condition`, as a writer whose clock lags by `lag_ms`.
async fn write(pool: &PgPool, rng: &mut Rng, condition: &str, set: &str, lag_ms: u64) -> bool {
    let Some(id) = pick(pool, rng, condition).await else {
        return false;
    };
    let sql = format!(
        "UPDATE {BOOTSTRAPS} b SET {set}, row_version = b.row_version + 1, \
           updated_at = now() - $2 * interval '1 millisecond' WHERE b.id = $1"
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(lag_ms as i64)
        .execute(pool)
        .await
        .expect("a write the constraints allow");
    true
}

const STOP_WORKER: &str = "worker_id = NULL, lease_token = NULL, heartbeat_at = NULL, \
    lease_expires_at = NULL";

/// One random write as the platform's workers, writers or an operator would make it, with the
/// writer's clock lagging within the slack. Returns the id when the write is one the deltas
/// cannot see (a deletion, or a row stamped far behind the slack).
async fn random_write(pool: &PgPool, rng: &mut Rng, hidden_allowed: bool) -> Option<Uuid> {
    let lag = rng.below(SLACK.as_millis() as u64 - 1000);
    let ttl = 1 + rng.below(6);
    let live = "b.run_state = 'running' AND b.lease_expires_at > now()";
    match rng.below(14) {
        0 | 1 => {
            write(
                pool,
                rng,
                live,
                "completed_documents = least(b.completed_documents + 1, b.total_documents)",
                lag,
            )
            .await;
        }
        2 => {
            let set = format!(
                "heartbeat_at = now(), lease_expires_at = now() + interval '{ttl} seconds'"
            );
            write(pool, rng, live, &set, lag).await;
        }
        3 => {
            // A claim of a queued job, or a reclaim of an expired one.
            let set = format!(
                "run_state = 'running', worker_id = 'w-' || {ttl}, \
                 lease_token = gen_random_uuid(), heartbeat_at = now(), \
                 lease_expires_at = now() + interval '{ttl} seconds'"
            );
            let claimable = "b.run_state = 'queued' \
                OR (b.run_state = 'running' AND b.lease_expires_at <= now())";
            write(pool, rng, claimable, &set, lag).await;
        }
        4 => {
            let set = format!(
                "run_state = 'failed', {STOP_WORKER}, completed_at = now(), \
                 last_error_code = 'compile_timeout', last_error_message = 'document 7 timed out'"
            );
            write(pool, rng, live, &set, lag).await;
        }
        5 => {
            let set = format!(
                "run_state = 'canceled', {STOP_WORKER}, completed_at = now(), \
                 last_error_code = 'operator_canceled', last_error_message = 'maintenance'"
            );
            write(pool, rng, "b.run_state IN ('queued', 'running')", &set, lag).await;
        }
        6 => {
            let set = "run_state = 'queued', completed_at = NULL, last_error_code = NULL, \
                       last_error_message = NULL";
            write(pool, rng, "b.run_state IN ('failed', 'canceled')", set, lag).await;
        }
        7 => {
            let set = format!(
                "run_state = 'succeeded', checkpoint = 'published', {STOP_WORKER}, \
                 completed_documents = b.total_documents, completed_at = now(), \
                 published_publication_id = p.id, published_fingerprint = p.fingerprint, \
                 published_head_revision = 1"
            );
            let sql = format!(
                "UPDATE {BOOTSTRAPS} b SET {set}, row_version = b.row_version + 1, \
                   updated_at = now() - $2 * interval '1 millisecond' \
                 FROM projection_set_publications p \
                 WHERE b.id = $1 AND p.tenant_id = b.tenant_id \
                   AND p.knowledge_space_id = b.knowledge_space_id"
            );
            if let Some(id) = pick(pool, rng, live).await {
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(id)
                    .bind(lag as i64)
                    .execute(pool)
                    .await
                    .expect("publish");
            }
        }
        8 => new_job(pool, rng).await,
        9 => {
            let space: Option<(String, Uuid)> = sqlx::query_as(
                "SELECT tenant_id, knowledge_space_id FROM legacy_space_publication_bootstraps b \
                 WHERE NOT EXISTS (SELECT 1 FROM knowledge_space_mutation_leases l \
                   WHERE l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id) \
                 ORDER BY md5(id::text || $1) LIMIT 1",
            )
            .bind(rng.next().to_string())
            .fetch_optional(pool)
            .await
            .expect("a space without a lease");
            if let Some((tenant, space)) = space {
                fixture::lease(pool, &tenant, space, rng.below(5) as i64).await;
            }
        }
        10 => {
            sqlx::query(
                "DELETE FROM knowledge_space_mutation_leases WHERE id = \
                 (SELECT id FROM knowledge_space_mutation_leases ORDER BY md5(id::text || $1) \
                  LIMIT 1)",
            )
            .bind(rng.next().to_string())
            .execute(pool)
            .await
            .expect("remove a lease");
        }
        11 if hidden_allowed => {
            // A space deleted with its bootstrap (cascading to its items).
            let id = pick(pool, rng, "true").await?;
            sqlx::query("DELETE FROM legacy_space_publication_bootstraps WHERE id = $1")
                .bind(id)
                .execute(pool)
                .await
                .expect("delete");
            return Some(id);
        }
        12 if hidden_allowed => {
            // A hand-made fix stamped twenty minutes back: no delta can see it.
            let id = pick(pool, rng, "b.run_state NOT IN ('running', 'succeeded')").await?;
            sqlx::query(
                "UPDATE legacy_space_publication_bootstraps SET row_version = row_version + 1, \
                   total_documents = total_documents + 1, \
                   updated_at = now() - interval '20 minutes' WHERE id = $1",
            )
            .bind(id)
            .execute(pool)
            .await
            .expect("a stale-stamped write");
            return Some(id);
        }
        _ => {
            write(
                pool,
                rng,
                live,
                "completed_documents = least(b.completed_documents + 2, b.total_documents)",
                lag,
            )
            .await;
        }
    }
    None
}

/// One poll into the model. A hidden write is certainly visible once the resync walked every
/// page since it: those are no longer excepted from the comparison.
async fn poll(
    session: &Session,
    sync: &mut LedgerSync,
    model: &mut Fleet,
    except: &mut HashMap<Uuid, (u32, i64)>,
) -> SyncReport {
    let changes = session
        .reads()
        .sync(sync, Duration::from_secs(1))
        .await
        .expect("poll");
    let report = changes.report;
    model.apply(changes);
    except.retain(|_, at| (report.cycles, report.cycle_page) < (at.0 + 1, at.1));
    report
}

/// The model against a full fetch judged at the same instant, ordered and filtered alike.
async fn compare(
    model: &mut Fleet,
    session: &Session,
    now: DateTime<Utc>,
    except: &HashMap<Uuid, (u32, i64)>,
    round: usize,
    compared_exactly: &mut usize,
) {
    let incremental = model.snapshot().expect("a snapshot");
    let full = full_fetch(session, now, model.query()).await;
    assert_eq!(
        board(&incremental, except),
        board(&full, except),
        "round {round}: the board differs from a full fetch ({:?})",
        model.query()
    );
    if except.is_empty() {
        *compared_exactly += 1;
        assert_eq!(
            without_rates(&incremental.summary),
            without_rates(&full.summary),
            "round {round}: the summary differs"
        );
        assert_eq!(
            incremental.tenants, full.tenants,
            "round {round}: the tenants differ"
        );
        assert_eq!(incremental.rows.len(), full.rows.len());
    }
}

/// Writes and polls `rounds` times, comparing the model with a full fetch after every poll.
/// `except` collects the ids of writes no delta can see, with the resync position at the
/// time: until the resync walked the whole table since, they are left out of the comparison.
async fn run(settings: SyncSettings, seed: u64, rounds: usize, hidden: bool) {
    run_on(TestDb::migrated().await, settings, seed, rounds, hidden).await
}

async fn run_on(db: TestDb, settings: SyncSettings, seed: u64, rounds: usize, hidden: bool) {
    let mut rng = Rng(seed);
    for _ in 0..60 {
        new_job(&db.pool, &mut rng).await;
    }
    let session = db.session(SessionOptions::default()).await;
    let mut sync = session.ledger_sync(settings);
    let mut model = Fleet::new(thresholds());
    let mut except: HashMap<Uuid, (u32, i64)> = HashMap::new();
    let mut report = SyncReport::default();
    let mut compared_exactly = 0;
    // A writer whose transaction stays open across a poll: it commits after the poll, with
    // an `updated_at` from before it.
    let mut open: Option<sqlx::Transaction<'static, sqlx::Postgres>> = None;
    for round in 0..rounds {
        if round > 0 {
            if let Some(tx) = open.take() {
                tx.commit().await.expect("commit the long transaction");
            }
            for _ in 0..1 + rng.below(5) {
                if let Some(id) = random_write(&db.pool, &mut rng, hidden).await {
                    except.insert(id, (report.cycles, report.cycle_page));
                }
            }
            if rng.chance(0.3) {
                let mut tx = db.pool.begin().await.expect("a long transaction");
                sqlx::query(
                    "UPDATE legacy_space_publication_bootstraps SET row_version = row_version + 1, \
                       updated_at = now() WHERE id = (SELECT id FROM \
                       legacy_space_publication_bootstraps WHERE run_state = 'queued' \
                       ORDER BY md5(id::text || $1) LIMIT 1)",
                )
                .bind(rng.next().to_string())
                .execute(&mut *tx)
                .await
                .expect("a write in a long transaction");
                open = Some(tx);
            }
            tokio::time::sleep(Duration::from_millis(50 + rng.below(300))).await;
        }
        // The operator changes the order or the filters now and then: the model keeps them
        // as rows change.
        if rng.chance(0.25) {
            model.set_query(random_query(&mut rng));
        }
        report = poll(&session, &mut sync, &mut model, &mut except).await;
        // Judged at the model's clock, which ticks between polls may have moved on.
        let now = model.now().expect("a clock");
        compare(
            &mut model,
            &session,
            now,
            &except,
            round,
            &mut compared_exactly,
        )
        .await;
        // A tick between polls: time passes, nothing is read.
        if rng.chance(0.5) {
            let later = now + chrono::Duration::milliseconds(rng.below(1500) as i64);
            model.advance(later);
            compare(
                &mut model,
                &session,
                later,
                &except,
                round,
                &mut compared_exactly,
            )
            .await;
        }
    }
    // Then the writers stop: within one resync cycle every hidden change has shown, and the
    // model equals a full fetch in every respect.
    if let Some(tx) = open.take() {
        tx.commit().await.expect("commit the long transaction");
    }
    let mut quiet_polls = 0;
    while !except.is_empty() {
        quiet_polls += 1;
        assert!(
            quiet_polls < 1_000,
            "hidden changes never showed: {except:?}"
        );
        poll(&session, &mut sync, &mut model, &mut except).await;
    }
    let now = model.now().expect("a clock");
    let before = compared_exactly;
    compare(
        &mut model,
        &session,
        now,
        &except,
        rounds,
        &mut compared_exactly,
    )
    .await;
    assert_eq!(compared_exactly, before + 1);
}

#[tokio::test]
async fn with_a_whole_table_resync_per_poll_the_model_always_equals_a_full_fetch() {
    let settings = SyncSettings {
        slack: SLACK,
        min_slice_pages: 1_000_000,
        max_slice_pages: 1_000_000,
        ..SyncSettings::default()
    };
    run(settings, 0x5eed_0001, 40, true).await;
}

#[tokio::test]
async fn with_one_page_per_poll_hidden_changes_show_within_one_resync_cycle() {
    let settings = SyncSettings {
        slack: SLACK,
        min_slice_pages: 1,
        max_slice_pages: 1,
        ..SyncSettings::default()
    };
    run(settings, 0x5eed_0002, 50, true).await;
}

#[tokio::test]
async fn changes_within_the_slack_show_at_the_very_next_poll() {
    let settings = SyncSettings {
        slack: SLACK,
        min_slice_pages: 1,
        max_slice_pages: 1,
        ..SyncSettings::default()
    };
    // No hidden writes: every comparison is exact, whatever the resync is doing.
    run(settings, 0x5eed_0003, 40, false).await;
}

#[tokio::test]
async fn with_the_recommended_index_on_updated_at_changes_come_through_it() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql(
        "CREATE INDEX bootstraps_updated_at_idx \
           ON legacy_space_publication_bootstraps (updated_at)",
    )
    .execute(&db.pool)
    .await
    .expect("the optional index");
    let session = db.session(SessionOptions::default()).await;
    let layout = *session.topology().primary().layout();
    assert!(layout.updated_at_index, "the index is found at connect");
    drop(session);
    let settings = SyncSettings {
        slack: SLACK,
        min_slice_pages: 1,
        max_slice_pages: 1,
        ..SyncSettings::default()
    };
    run_on(db, settings, 0x5eed_0004, 25, false).await;
}

#[tokio::test]
async fn a_tenant_scoped_sync_sees_only_its_tenant() {
    let db = TestDb::migrated().await;
    let mut rng = Rng(7);
    for _ in 0..30 {
        new_job(&db.pool, &mut rng).await;
    }
    let session = db
        .session(SessionOptions {
            tenant: Some("acme".into()),
            ..SessionOptions::default()
        })
        .await;
    let mut sync: LedgerSync = session.ledger_sync(SyncSettings::default());
    let mut model = Fleet::new(thresholds());
    for _ in 0..5 {
        random_write(&db.pool, &mut rng, false).await;
        let changes = session
            .reads()
            .sync(&mut sync, Duration::from_secs(1))
            .await
            .expect("poll");
        model.apply(changes);
    }
    let snapshot = model.snapshot().expect("a snapshot");
    let acme: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps WHERE tenant_id = 'acme'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("count");
    assert_eq!(snapshot.rows.len() as i64, acme);
    assert!(snapshot.rows.values().all(|r| &*r.tenant == "acme"));
}

/// Twenty thousand spaces in every state, with leases, analyzed: big enough that the planner
/// would read the whole table if a statement let it.
async fn large_ledger(db: &TestDb) {
    sqlx::raw_sql(
        "INSERT INTO knowledge_spaces (id, tenant_id, name) \
         SELECT md5('s' || i)::uuid, 'tenant-' || (i % 200), 'space' FROM generate_series(1, 20000) i; \
         INSERT INTO legacy_space_publication_bootstraps (id, tenant_id, knowledge_space_id, \
           idempotency_key, checkpoint, run_state, total_documents, completed_documents, \
           worker_id, lease_token, lease_expires_at, heartbeat_at, row_version, \
           snapshot_metadata, created_at, updated_at, completed_at) \
         SELECT s.id, s.tenant_id, s.id, 'legacy-space-publication-bootstrap-v1', \
           CASE WHEN st = 'queued' THEN 'pending_snapshot' ELSE 'rebuilding' END, st, 50, 10, \
           CASE WHEN st = 'running' THEN 'w' END, CASE WHEN st = 'running' THEN gen_random_uuid() END, \
           CASE WHEN st = 'running' THEN now() + interval '1 hour' END, \
           CASE WHEN st = 'running' THEN now() END, 1, '{}'::jsonb, now() - interval '1 day', \
           now() - (i % 3600) * interval '1 second', \
           CASE WHEN st IN ('failed', 'canceled') THEN now() END \
         FROM (SELECT id, tenant_id, row_number() OVER () AS i FROM knowledge_spaces) s, \
           LATERAL (SELECT (ARRAY['queued', 'running', 'failed', 'canceled', 'queued'])[1 + (s.i % 5)::int] AS st) x; \
         INSERT INTO knowledge_space_mutation_leases (id, tenant_id, knowledge_space_id, operation, acquired_at) \
         SELECT gen_random_uuid(), tenant_id, id, 'upload', now() FROM knowledge_spaces LIMIT 200; \
         ANALYZE;",
    )
    .execute(&db.pool)
    .await
    .expect("a large ledger");
}

/// The plan of `sql` with its parameters bound by `bind`.
async fn plan<'q>(
    pool: &Db,
    sql: &'q str,
    bind: impl FnOnce(
        sqlx::query::QueryScalar<'q, sqlx::Postgres, String, sqlx::postgres::PgArguments>,
    ) -> sqlx::query::QueryScalar<
        'q,
        sqlx::Postgres,
        String,
        sqlx::postgres::PgArguments,
    >,
) -> String {
    // In a transaction as the console opens them, on its own sessions.
    let mut tx = pool.begin(TxKind::Read).await.expect("a transaction");
    let query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
    let plan = bind(query)
        .fetch_all(&mut *tx)
        .await
        .unwrap_or_else(|e| panic!("EXPLAIN {sql}: {e}"))
        .join("\n");
    tx.commit().await.expect("commit");
    plan
}

#[tokio::test]
async fn every_poll_statement_uses_an_index_or_a_tid_range_never_a_sequential_scan() {
    use bootstrap_console::store::fleet;
    let db = TestDb::migrated().await;
    large_ledger(&db).await;
    // Plans as the console's own sessions make them (they plan every execution for its
    // parameters).
    let session = db.session(SessionOptions::default()).await;
    let topology = session.topology();
    let pool = topology.primary();
    let layout = *session.topology().primary().layout();
    let ids: Vec<Uuid> =
        sqlx::query_scalar("SELECT id FROM legacy_space_publication_bootstraps LIMIT 50")
            .fetch_all(&db.pool)
            .await
            .expect("ids");
    let since = chrono::Utc::now() - chrono::Duration::seconds(5);
    let none = None::<String>;
    let explain = |sql: String| format!("EXPLAIN {sql}");
    let statements = [
        (
            "clock",
            plan(pool, &explain(fleet::CLOCK_SQL.into()), |q| q).await,
        ),
        (
            "first load, a page range",
            plan(pool, &explain(fleet::pages_sql()), |q| {
                q.bind(none.clone()).bind(0i64).bind(Some(2048i64))
            })
            .await,
        ),
        (
            "first load, the last page range",
            plan(pool, &explain(fleet::pages_sql()), |q| {
                q.bind(none.clone()).bind(2048i64).bind(None::<i64>)
            })
            .await,
        ),
        (
            "first load, one tenant",
            plan(pool, &explain(fleet::tenant_sql()), |q| q.bind("tenant-7")).await,
        ),
        (
            "changed rows",
            plan(pool, &explain(fleet::changed_sql(&layout)), |q| {
                q.bind(none.clone()).bind(since)
            })
            .await,
        ),
        (
            "changed rows of a tenant",
            plan(pool, &explain(fleet::changed_sql(&layout)), |q| {
                q.bind(Some("tenant-7")).bind(since)
            })
            .await,
        ),
        (
            "a resync slice",
            plan(pool, &explain(fleet::versions_sql()), |q| {
                q.bind(none.clone()).bind(40i64).bind(Some(48i64))
            })
            .await,
        ),
        (
            "the last resync slice",
            plan(pool, &explain(fleet::versions_sql()), |q| {
                q.bind(none.clone()).bind(40i64).bind(None::<i64>)
            })
            .await,
        ),
        (
            "rows by id",
            plan(pool, &explain(fleet::by_ids_sql()), |q| {
                q.bind(none.clone()).bind(ids.clone())
            })
            .await,
        ),
        (
            "leases",
            plan(pool, &explain(fleet::leases_sql(&layout)), |q| {
                q.bind(none.clone())
            })
            .await,
        ),
        (
            "the leases' delta",
            plan(pool, &explain(fleet::lease_delta_sql(&layout)), |q| {
                q.bind(none.clone())
                    .bind(vec![1i32, 2])
                    .bind(vec![3i32, 4])
                    .bind(vec![5i64, 6])
            })
            .await,
        ),
    ];
    for (name, plan) in &statements {
        assert!(
            !plan.contains("Seq Scan on legacy_space_publication_bootstraps"),
            "{name} scans the whole bootstrap table:\n{plan}"
        );
        assert!(
            !plan.contains("legacy_space_publication_bootstrap_items"),
            "{name} reads items:\n{plan}"
        );
    }
    let by_name: HashMap<&str, &String> = statements.iter().map(|(n, p)| (*n, p)).collect();
    for name in [
        "first load, a page range",
        "a resync slice",
        "the last resync slice",
    ] {
        assert!(
            by_name[name].contains("Tid Range Scan"),
            "{name}:\n{}",
            by_name[name]
        );
    }
    assert!(
        by_name["changed rows"].contains("legacy_space_bootstraps_claim_idx"),
        "changed rows come through the claim index:\n{}",
        by_name["changed rows"]
    );

    // With the index the README recommends, changed rows come through it.
    sqlx::raw_sql(
        "CREATE INDEX bootstraps_updated_at_idx \
           ON legacy_space_publication_bootstraps (updated_at); ANALYZE;",
    )
    .execute(&db.pool)
    .await
    .expect("the optional index");
    let session = db.session(SessionOptions::default()).await;
    let layout = *session.topology().primary().layout();
    let topology = session.topology();
    let pool = topology.primary();
    let plan = plan(pool, &explain(fleet::changed_sql(&layout)), |q| {
        q.bind(None::<String>).bind(since)
    })
    .await;
    assert!(
        plan.contains("bootstraps_updated_at_idx")
            && !plan.contains("Seq Scan on legacy_space_publication_bootstraps"),
        "{plan}"
    );
}

#[tokio::test]
async fn status_pages_walk_the_claim_index_in_order_and_find_blocked_rows_from_leases() {
    use bootstrap_console::store::report;
    let db = TestDb::migrated().await;
    large_ledger(&db).await;
    let session = db.session(SessionOptions::default()).await;
    let topology = session.topology();
    let pool = topology.primary();
    let now = chrono::Utc::now();
    // failed, queued, canceled, succeeded: ordered by the index itself, page after page (no
    // sort of the class); blocked (by an orphan suspect or a writer at work): found from the
    // leases.
    for class in [0usize, 1, 6, 8, 9, 10] {
        let sql = format!("EXPLAIN {}", report::page_sql(class));
        let plan = plan(pool, &sql, |q| {
            q.bind(None::<String>)
                .bind(now)
                .bind(600_000_000i64)
                .bind(1.0f64 / 3.0)
                .bind(None::<Vec<String>>)
                .bind(None::<Vec<String>>)
                .bind(Some(now - chrono::Duration::minutes(30)))
                .bind(Some(Uuid::nil()))
                .bind(500i64)
        })
        .await;
        assert!(
            !plan.contains("Seq Scan on legacy_space_publication_bootstraps"),
            "class {class}:\n{plan}"
        );
        if !matches!(class, 1 | 6) {
            assert!(
                plan.contains("legacy_space_bootstraps_claim_idx") && !plan.contains("Sort"),
                "class {class} walks the claim index in order:\n{plan}"
            );
        }
    }
}
