//! Semantic preconditions (domain contract §3, see [`crate::domain`]): each bootstrap action
//! rests on a few fields of the row, and only a change there refuses it. A worker's progress —
//! row version, document counts, heartbeat, lease expiry, checkpoint — never does; the plan
//! and the outcome say what moved.
//!
//! * cancel rests on the job still being queued or running;
//! * retry rests on the job still being in the failed or canceled episode the operator saw:
//!   the same `run_state` and the same `completed_at`.
//!
//! A script may also demand an exact row version (`--row-version`).
//!
//! The rule itself is the database's (`bootstrap_console.bootstrap_action_refusal`, console
//! schema unit 0005), evaluated over the row the plan reads and over the row the action locks;
//! this module only says its verdict as a sentence ([`verdict`]).

use super::BootstrapKind;
use super::action::SeenBootstrap;
use crate::domain::ids::IdNames;
use crate::domain::model::Bootstrap;
use crate::domain::refusal::Refusal;
use crate::store::rules::BootstrapSeen;

/// How the rule of `kind` reads, for a refusal that names it.
fn needs(kind: BootstrapKind) -> &'static str {
    match kind {
        BootstrapKind::Retry => "failed or canceled",
        BootstrapKind::Cancel => "queued or running",
    }
}

/// What `kind` rests on, as the database's rule takes it.
pub(super) fn rests_on<'a>(
    kind: BootstrapKind,
    seen: &'a SeenBootstrap,
    exact_row_version: Option<i32>,
) -> BootstrapSeen<'a> {
    BootstrapSeen {
        action: kind.kind().name(),
        run_state: seen.run_state.as_str(),
        completed_at: seen.completed_at,
        exact_row_version,
    }
}

/// The database's verdict (`refusal`: `None` when the action holds) over `now`, as the
/// operator is told it: `Ok` carries the sentence of what moved meanwhile, if anything did.
pub(super) fn verdict(
    refusal: Option<&str>,
    kind: BootstrapKind,
    seen: &SeenBootstrap,
    exact_row_version: Option<i32>,
    now: &Bootstrap,
    names: &IdNames,
) -> Result<Option<String>, Refusal> {
    let space = names.shown(&now.knowledge_space_id);
    Err(match refusal {
        None => return Ok(meanwhile(seen, now)),
        Some("stale") => Refusal::Stale {
            space,
            seen: exact_row_version.unwrap_or(seen.row_version),
            now: now.row_version,
            state: now.run_state,
        },
        Some("finished") => Refusal::Finished {
            space,
            was: seen.run_state,
            now: now.run_state,
        },
        Some("retried_meanwhile") => Refusal::RetriedMeanwhile {
            space,
            was: seen.run_state,
            now: now.run_state,
            by: None,
        },
        Some("new_episode") => Refusal::NewEpisode {
            space,
            now: now.run_state,
            ended_at: now.completed_at,
        },
        // `wrong_state`, and any verdict a newer schema may give that this console does not
        // know: refused for the state it names.
        Some(_) => Refusal::WrongState {
            space,
            state: now.run_state,
            action: kind.verb(),
            needs: needs(kind),
        },
    })
}

/// "since you looked: progress 25 → 34 of 50", or `None` when the row is as seen.
/// [`meanwhile`] as a plan says it: what moved, and that the state the decision rests on
/// still holds ("…; still running") — an outcome leaves that out, the state being changed.
pub(super) fn meanwhile_before(seen: &SeenBootstrap, now: &Bootstrap) -> Option<String> {
    let mut sentence = meanwhile(seen, now)?;
    if seen.run_state == now.run_state {
        sentence.push_str(&format!("; still {}", now.run_state));
    }
    Some(sentence)
}

pub(super) fn meanwhile(seen: &SeenBootstrap, now: &Bootstrap) -> Option<String> {
    if seen.row_version == now.row_version {
        return None;
    }
    let mut moved = Vec::new();
    if seen.run_state != now.run_state {
        moved.push(format!("{} → {}", seen.run_state, now.run_state));
    }
    if seen.checkpoint != now.checkpoint {
        moved.push(format!(
            "checkpoint {} → {}",
            seen.checkpoint, now.checkpoint
        ));
    }
    if seen.completed_documents != now.completed_documents {
        moved.push(format!(
            "progress {} → {} of {}",
            seen.completed_documents, now.completed_documents, now.total_documents
        ));
    }
    if moved.is_empty() {
        moved.push(format!(
            "other columns changed (row_version {} → {})",
            seen.row_version, now.row_version
        ));
    }
    Some(format!("since you looked: {}", moved.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::{Checkpoint, RunState};
    use chrono::{Duration, TimeZone, Utc};
    use uuid::Uuid;

    fn job(state: RunState, completed: i32, version: i32, ended: Option<i64>) -> Bootstrap {
        let at = |m: i64| {
            Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
                .single()
                .expect("a valid instant")
                + Duration::minutes(m)
        };
        Bootstrap {
            id: Uuid::from_u128(1),
            tenant_id: "t".into(),
            knowledge_space_id: Uuid::from_u128(2),
            idempotency_key: "k".into(),
            checkpoint: Checkpoint::Rebuilding,
            run_state: state,
            total_documents: 50,
            completed_documents: completed,
            worker: None,
            last_error_code: None,
            last_error_message: None,
            row_version: version,
            publication: None,
            snapshot_metadata: serde_json::Value::Null,
            created_at: at(0),
            updated_at: at(1),
            completed_at: ended.map(at),
        }
    }

    #[test]
    fn an_action_that_holds_reports_what_moved_meanwhile() {
        let seen = SeenBootstrap::from(&job(RunState::Running, 25, 30, None));
        let now = job(RunState::Running, 34, 39, None);
        let names = IdNames::default();
        assert_eq!(
            verdict(None, BootstrapKind::Cancel, &seen, None, &now, &names),
            Ok(Some("since you looked: progress 25 → 34 of 50".into()))
        );
        let touched = job(RunState::Running, 25, 30, None);
        assert_eq!(
            verdict(None, BootstrapKind::Cancel, &seen, None, &touched, &names),
            Ok(None)
        );
    }

    #[test]
    fn each_verdict_of_the_database_is_said_as_its_refusal() {
        let names = IdNames::default();
        let running = SeenBootstrap::from(&job(RunState::Running, 49, 30, None));
        let done = job(RunState::Succeeded, 50, 31, Some(5));
        let finished = verdict(
            Some("finished"),
            BootstrapKind::Cancel,
            &running,
            None,
            &done,
            &names,
        )
        .expect_err("refused");
        assert!(finished.decision_changed());
        assert!(matches!(finished, Refusal::Finished { .. }), "{finished}");
        let failed = SeenBootstrap::from(&job(RunState::Failed, 10, 12, Some(3)));
        let retried = job(RunState::Queued, 10, 13, None);
        assert!(matches!(
            verdict(
                Some("retried_meanwhile"),
                BootstrapKind::Retry,
                &failed,
                None,
                &retried,
                &names
            ),
            Err(Refusal::RetriedMeanwhile {
                was: RunState::Failed,
                now: RunState::Queued,
                ..
            })
        ));
        let again = job(RunState::Failed, 11, 20, Some(9));
        assert!(matches!(
            verdict(
                Some("new_episode"),
                BootstrapKind::Retry,
                &failed,
                None,
                &again,
                &names
            ),
            Err(Refusal::NewEpisode { .. })
        ));
        let now = job(RunState::Running, 26, 31, None);
        assert!(matches!(
            verdict(
                Some("stale"),
                BootstrapKind::Cancel,
                &running,
                Some(30),
                &now,
                &names
            ),
            Err(Refusal::Stale {
                seen: 30,
                now: 31,
                ..
            })
        ));
        let succeeded = job(RunState::Succeeded, 50, 9, Some(1));
        let seen = SeenBootstrap::from(&succeeded);
        let wrong = verdict(
            Some("wrong_state"),
            BootstrapKind::Retry,
            &seen,
            None,
            &succeeded,
            &names,
        )
        .expect_err("refused");
        assert!(!wrong.decision_changed());
        assert_eq!(
            wrong.to_string(),
            "space 00000000 is succeeded, retry needs failed or canceled"
        );
    }
}
