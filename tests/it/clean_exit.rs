//! Every command closes its connections before it exits, so the server's log stays clean: no
//! "connection to client lost", no "could not send data to client". On a cluster of its own,
//! so the server's log holds nothing but these runs.

use crate::common;

use common::OwnCluster;
use common::cli::{on, stdout};
use common::fixture::{self, JobSpec};

#[tokio::test]
async fn commands_leave_no_lost_connection_in_the_server_log() {
    let cluster = OwnCluster::start().await;
    let log = cluster.log();
    let db = cluster.migrated().await;
    let bare = cluster.empty().await;
    let blind = format!("blind_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{blind}\" LOGIN PASSWORD 'pw'"
    )))
    .execute(&db.pool)
    .await
    .expect("a role without grants");
    let blind_url = db.url_as(&blind);
    let mut runs = 0;
    // Commands that stop at a sentence after connecting close their connections too.
    for (output, code) in [
        (on(&bare, &["status"]), 5),
        (
            common::cli::run(&["status", "--database-url", &blind_url]),
            8,
        ),
    ] {
        assert_eq!(output.status.code(), Some(code), "{}", stdout(&output));
        runs += 1;
    }
    // So does an action whose lock wait ran out, and one sent again while the row is held.
    let held = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let holder = fixture::hold_row(&db.pool, held.bootstrap).await;
    let held_id = held.bootstrap.to_string();
    let first = on(&db, &["cancel", &held_id, "--reason", "c", "--yes"]);
    assert_eq!(first.status.code(), Some(4), "{}", stdout(&first));
    let request = stdout(&first)
        .lines()
        .find_map(|l| l.strip_prefix("request ").map(str::to_string))
        .expect("a request line");
    let args = [
        "cancel",
        &held_id,
        "--reason",
        "c",
        "--yes",
        "--request-id",
        &request,
    ];
    let again = on(&db, &args);
    assert_eq!(again.status.code(), Some(6), "{}", stdout(&again));
    runs += 2;
    holder.rollback().await.expect("release");
    for round in 0..6 {
        let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
        let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
        let lease = fixture::lease(&db.pool, "acme", running.space, 3600).await;
        let (failed, running, lease) = (
            failed.space.to_string(),
            running.space.to_string(),
            lease.to_string(),
        );
        for args in [
            vec!["status"],
            vec!["status", "--json"],
            vec!["retry", &failed, "--reason", "r", "--dry-run"],
            vec!["retry", &failed, "--reason", "r", "--yes"],
            vec!["retry", &failed, "--reason", "refused now", "--yes"],
            vec!["cancel", &running, "--reason", "c", "--yes"],
            vec!["lease", "remove", &lease, "--reason", "l", "--yes"],
        ] {
            let output = on(&db, &args);
            assert!(
                matches!(output.status.code(), Some(0 | 1 | 3)),
                "round {round} {args:?}: {}",
                stdout(&output)
            );
            runs += 1;
        }
    }
    // A lost connection's lines are written before its server process ends: wait for every
    // console's process to end.
    common::until("every console's server process ended", 30, || async {
        let left: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bootstrap-console'",
        )
        .fetch_one(&db.pool)
        .await
        .expect("activity");
        left == 0
    })
    .await;
    let text = std::fs::read_to_string(&log).expect("the server log");
    let noise: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("connection to client lost")
                || l.contains("could not send data to client")
                || l.contains("could not receive data from client")
                || l.contains("unexpected EOF on client connection")
        })
        .collect();
    assert!(
        noise.is_empty(),
        "{} of {runs} runs left noise in the server log:\n{}",
        noise.len(),
        noise.join("\n")
    );
}
