//! The rollout simulator against a real PostgreSQL: a clean rollout finishes correctly; faults
//! happen and operator retries recover them; orphan leases block until removed; a cancel
//! mid-rebuild fences the worker out and a retry resumes in place.

use crate::common;

use std::time::Duration;

use bootstrap_console::domain::actions::{self, Action, Outcome, RequestId, SeenBootstrap};
use bootstrap_console::domain::fleet::FleetSnapshot;
use bootstrap_console::domain::model::RunState;
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::sandbox::sim::{self, RunConfig, SeedConfig, Simulation, Stats};
use bootstrap_console::store::schema;
use common::{TestDb, until};
use uuid::Uuid;

/// A database with the platform stand-in, seeded; 0009 and the console schema applied by the
/// seeding itself.
async fn seeded(config: &SeedConfig) -> (TestDb, sim::SeedReport) {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let report = sim::seed(&mut conn, config).await.expect("seed");
    (db, report)
}

fn small(seed: u64) -> SeedConfig {
    SeedConfig {
        seed,
        tenants: 2,
        spaces_per_tenant: 6,
        empty_share: 0.15,
        large_share: 0.0,
        documents: (1, 12),
        migrated_share: 0.15,
        writer_share: 0.0,
        ..SeedConfig::default()
    }
}

fn quick(seed: u64) -> RunConfig {
    RunConfig {
        seed,
        workers: 3,
        lease_ttl: Duration::from_secs(2),
        document_time: Duration::from_millis(5),
        writer_hold: Duration::from_millis(300),
        ..RunConfig::default()
    }
}

async fn board(session: &Session) -> FleetSnapshot {
    let mut fleet = session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("board");
    fleet.snapshot().expect("a snapshot")
}

async fn all_succeeded(session: &Session) -> bool {
    let b = board(session).await;
    b.summary.readable == b.summary.spaces
}

#[tokio::test]
async fn a_fault_free_rollout_publishes_every_space_exactly() {
    let (db, report) = seeded(&small(11)).await;
    assert!(report.markers > 0 && report.migrated_spaces > 0);
    let session = db.session(SessionOptions::default()).await;
    let simulation = Simulation::start(
        db.fresh_pool().await,
        quick(11).fault_free(),
        report.writers,
    );

    until("every space succeeded", 60, || all_succeeded(&session)).await;
    simulation.stop().await;

    let spaces_without_head: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM knowledge_spaces s \
         WHERE EXISTS (SELECT 1 FROM document_assets a WHERE a.knowledge_space_id = s.id) \
           AND NOT EXISTS (SELECT 1 FROM projection_set_publication_heads h \
                           WHERE h.tenant_id = s.tenant_id AND h.knowledge_space_id = s.id \
                             AND h.revision > 0)",
    )
    .fetch_one(&db.pool)
    .await
    .expect("heads");
    assert_eq!(spaces_without_head, 0, "every non-empty space has a head");
    let mismatched: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps b \
         WHERE b.total_documents <> (SELECT count(*) FROM legacy_space_publication_bootstrap_items i \
                                     WHERE i.bootstrap_id = b.id) \
            OR b.total_documents <> (SELECT count(*) FROM document_assets a \
                                     WHERE a.knowledge_space_id = b.knowledge_space_id) \
            OR b.completed_documents <> b.total_documents \
            OR b.run_state <> 'succeeded' OR b.checkpoint <> 'published' \
            OR (b.total_documents > 0 AND b.published_publication_id IS NULL)",
    )
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!(
        mismatched, 0,
        "item counts equal document counts, all published"
    );
    let heads_match: bool = sqlx::query_scalar(
        "SELECT bool_and(h.publication_id = b.published_publication_id \
                         AND h.revision = b.published_head_revision) \
         FROM legacy_space_publication_bootstraps b JOIN projection_set_publication_heads h \
           ON h.tenant_id = b.tenant_id AND h.knowledge_space_id = b.knowledge_space_id",
    )
    .fetch_one(&db.pool)
    .await
    .expect("heads");
    assert!(heads_match, "each job records the head it published");
}

#[tokio::test]
async fn with_faults_jobs_fail_and_are_reclaimed_and_operator_retries_finish_the_rollout() {
    let seed = SeedConfig {
        spaces_per_tenant: 10,
        ..small(5)
    };
    let (db, report) = seeded(&seed).await;
    let session = db.session(SessionOptions::default()).await;
    let config = RunConfig {
        item_failure_rate: 0.04,
        worker_crash_rate: 0.3,
        slow_document_rate: 0.0,
        ..quick(5)
    };
    let simulation = Simulation::start(db.fresh_pool().await, config, report.writers);

    let mut retried = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let b = board(&session).await;
        if b.summary.readable == b.summary.spaces {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the rollout never recovered"
        );
        for row in b.rows.values().filter(|r| r.run_state == RunState::Failed) {
            let action = Action::retry(SeenBootstrap::from(&row), RequestId::new());
            if let Outcome::Applied(_) = actions::apply(&session, &action, "transient failure")
                .await
                .expect("retry")
            {
                retried += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stats = simulation.stats();
    assert!(Stats::get(&stats.failures) > 0, "documents failed");
    assert!(Stats::get(&stats.worker_crashes) > 0, "workers crashed");
    assert!(
        Stats::get(&stats.reclaims) > 0,
        "expired jobs were reclaimed"
    );
    assert!(retried > 0);
    simulation.stop().await;
    let audits: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM bootstrap_console.audit_log WHERE action = 'retry'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert_eq!(audits, retried, "one audit record per applied retry");
}

#[tokio::test]
async fn an_orphan_lease_holds_its_space_at_pending_snapshot_until_removed() {
    let seed = SeedConfig {
        writer_share: 0.4,
        orphan_share: 1.0,
        ..small(23)
    };
    let (db, report) = seeded(&seed).await;
    let orphans: Vec<Uuid> = report
        .writers
        .iter()
        .map(|w| w.knowledge_space_id)
        .collect();
    assert!(!orphans.is_empty(), "the seed placed orphan leases");
    let session = db.session(SessionOptions::default()).await;
    let simulation = Simulation::start(
        db.fresh_pool().await,
        quick(23).fault_free(),
        report.writers,
    );

    until("every space without an orphan succeeded", 60, || async {
        let b = board(&session).await;
        b.summary.readable as usize == b.rows.len() - orphans.len()
    })
    .await;
    // The workers keep trying the orphans' spaces, and each try is refused for the lease.
    let refused = Stats::get(&simulation.stats().blocked_captures);
    until(
        "the workers tried every blocked space again",
        60,
        || async {
            Stats::get(&simulation.stats().blocked_captures) >= refused + orphans.len() as u64
        },
    )
    .await;
    let b = board(&session).await;
    for space in &orphans {
        let row = b.rows.values().find(|r| r.space == *space).expect("row");
        assert_eq!(row.checkpoint.as_str(), "pending_snapshot");
        assert!(row.signals.blocked_by_lease && row.signals.lease_orphan_suspect);
    }

    for judged in session.reads().leases().await.expect("leases").leases {
        let action = Action::remove_lease(judged.lease.identity(), false, RequestId::new());
        let outcome = actions::apply(&session, &action, "writer crashed last night")
            .await
            .expect("remove");
        assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
    }
    until("the unblocked spaces finish too", 60, || {
        all_succeeded(&session)
    })
    .await;
    simulation.stop().await;
}

#[derive(sqlx::FromRow, PartialEq, Debug)]
struct Frozen {
    document_asset_id: Uuid,
    ordinal: i32,
}

async fn frozen_items(db: &TestDb, bootstrap: Uuid) -> Vec<Frozen> {
    sqlx::query_as(
        "SELECT document_asset_id, ordinal FROM legacy_space_publication_bootstrap_items \
         WHERE bootstrap_id = $1 ORDER BY ordinal",
    )
    .bind(bootstrap)
    .fetch_all(&db.pool)
    .await
    .expect("items")
}

async fn ledger_writes(
    db: &TestDb,
    bootstrap: Uuid,
) -> (i32, Option<chrono::DateTime<chrono::Utc>>) {
    sqlx::query_as(
        "SELECT b.row_version, (SELECT max(updated_at) FROM legacy_space_publication_bootstrap_items \
                                WHERE bootstrap_id = b.id) \
         FROM legacy_space_publication_bootstraps b WHERE b.id = $1",
    )
    .bind(bootstrap)
    .fetch_one(&db.pool)
    .await
    .expect("writes")
}

#[tokio::test]
async fn a_cancel_mid_rebuild_stops_the_worker_and_a_retry_resumes_from_the_checkpoint() {
    let seed = SeedConfig {
        tenants: 1,
        spaces_per_tenant: 1,
        empty_share: 0.0,
        large_share: 1.0,
        large_documents: (120, 120),
        migrated_share: 0.0,
        writer_share: 0.0,
        ..SeedConfig::default()
    };
    let (db, report) = seeded(&seed).await;
    let session = db.session(SessionOptions::default()).await;
    let config = RunConfig {
        workers: 1,
        lease_ttl: Duration::from_secs(5),
        document_time: Duration::from_millis(25),
        ..RunConfig::default()
    }
    .fault_free();
    let simulation = Simulation::start(db.fresh_pool().await, config.clone(), report.writers);
    let job = loop {
        let b = board(&session).await;
        let row = b.board.get(0).expect("the one space").clone();
        if row.completed >= 10 {
            break session
                .reads()
                .find_bootstrap(row.id)
                .await
                .expect("read")
                .expect("the bootstrap");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(job.checkpoint.as_str(), "rebuilding");
    let items_before = frozen_items(&db, job.id).await;
    let capture_before = job.snapshot_metadata["capture"].clone();

    // The worker keeps writing while the operator looks; its progress never refuses a cancel.
    let seen = session
        .reads()
        .find_bootstrap(job.id)
        .await
        .expect("read")
        .expect("exists");
    until("the worker committed more documents", 30, || async {
        common::completed_documents(&db.pool, job.id).await > seen.completed_documents
    })
    .await;
    let cancel = Action::cancel(SeenBootstrap::from(&seen), RequestId::new());
    let outcome = actions::apply(&session, &cancel, "pause for maintenance")
        .await
        .expect("cancel");
    assert!(
        matches!(outcome, Outcome::Applied(_)),
        "cancel: {outcome:?}"
    );
    let writes_at_cancel = ledger_writes(&db, job.id).await;
    let completed_at_cancel = session
        .reads()
        .find_bootstrap(job.id)
        .await
        .expect("read")
        .expect("exists")
        .completed_documents;

    until("the worker hit the fence", 10, || async {
        Stats::get(&simulation.stats().fenced_out) >= 1
    })
    .await;
    // Every worker stopped: whatever it did after the fence is in the ledger now.
    let captured_before_stop = Stats::get(&simulation.stats().captures);
    simulation.stop().await;
    assert_eq!(
        ledger_writes(&db, job.id).await,
        writes_at_cancel,
        "no write after the cancel"
    );
    let canceled = session
        .reads()
        .find_bootstrap(job.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(canceled.run_state, RunState::Canceled);
    let simulation = Simulation::start(db.fresh_pool().await, config, Vec::new());

    let retry = Action::retry(SeenBootstrap::from(&canceled), RequestId::new());
    let outcome = actions::apply(&session, &retry, "maintenance done")
        .await
        .expect("retry");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
    let resumed = session
        .reads()
        .find_bootstrap(job.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        resumed.checkpoint.as_str(),
        "rebuilding",
        "retry keeps the checkpoint"
    );
    assert_eq!(
        resumed.completed_documents, completed_at_cancel,
        "no progress lost"
    );

    until("the resumed job succeeded", 60, || all_succeeded(&session)).await;
    let captures = captured_before_stop + Stats::get(&simulation.stats().captures);
    simulation.stop().await;
    assert_eq!(captures, 1, "the snapshot was captured once");
    assert_eq!(
        frozen_items(&db, job.id).await,
        items_before,
        "same items, same ordinals"
    );
    let done = session
        .reads()
        .find_bootstrap(job.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        done.snapshot_metadata["capture"], capture_before,
        "no second snapshot"
    );
}
