//! The poller against a real PostgreSQL: when it polls.

use std::time::{Duration, Instant};

use crate::common;

use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::poller::{self, Instruction, PollStatus, PollerOptions};
use bootstrap_console::store::sync::SyncSettings;
use common::TestDb;
use common::fixture::{self, JobSpec};
use tokio::sync::watch;

/// When the first good poll after `after` started.
async fn polled(status: &mut watch::Receiver<PollStatus>, after: Option<Instant>) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(at) = status.borrow_and_update().polling.polled_at
            && Some(at) != after
        {
            return at;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        tokio::time::timeout(left, status.changed())
            .await
            .expect("a poll within 30 s")
            .expect("the poller runs");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poll_asked_for_at_once_is_one_poll_and_the_cadence_resumes() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let session = Session::open(&db.target(), SessionOptions::default())
        .await
        .expect("open");
    let options = PollerOptions {
        interval: Duration::from_secs(60),
        thresholds: Thresholds::default(),
        sync: SyncSettings::default(),
    };
    let handle = poller::start(session.clone(), options);
    let mut status = handle.status.clone();
    let first = polled(&mut status, None).await;
    handle.send(Instruction::PollNow);
    let asked = polled(&mut status, Some(first)).await;
    // The cadence's next poll is a minute away: however long this takes, no other poll
    // starts meanwhile (one asked for at once must not leave polling at full speed).
    for _ in 0..50 {
        sqlx::query("SELECT pg_sleep(0.01)")
            .execute(&db.pool)
            .await
            .expect("a round trip");
    }
    assert_eq!(
        status.borrow().polling.polled_at,
        Some(asked),
        "polls went on after the one asked for"
    );
    drop(handle);
    session.close().await;
}
