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

use super::BootstrapKind;
use super::action::SeenBootstrap;
use crate::domain::ids::IdNames;
use crate::domain::model::{Bootstrap, RunState};
use crate::domain::refusal::Refusal;

/// The run states each bootstrap action is allowed from, and how the rule reads.
pub(super) fn allowed(kind: BootstrapKind) -> (&'static [RunState], &'static str) {
    match kind {
        BootstrapKind::Retry => (
            &[RunState::Failed, RunState::Canceled],
            "failed or canceled",
        ),
        BootstrapKind::Cancel => (&[RunState::Queued, RunState::Running], "queued or running"),
    }
}

/// Whether `kind` still applies to `now`, given what the operator saw. `Ok` carries the
/// sentence of what moved meanwhile, if anything did.
pub(super) fn decide(
    kind: BootstrapKind,
    seen: &SeenBootstrap,
    exact_row_version: Option<i32>,
    now: &Bootstrap,
    names: &IdNames,
) -> Result<Option<String>, Refusal> {
    let space = names.shown(&now.knowledge_space_id);
    if let Some(exact) = exact_row_version
        && exact != now.row_version
    {
        return Err(Refusal::Stale {
            space: space.clone(),
            seen: exact,
            now: now.row_version,
            state: now.run_state,
        });
    }
    let (states, needs) = allowed(kind);
    let wrong_state = || Refusal::WrongState {
        space: space.clone(),
        state: now.run_state,
        action: kind.verb(),
        needs,
    };
    let seen_allowed = states.contains(&seen.run_state);
    match kind {
        BootstrapKind::Cancel => {
            if states.contains(&now.run_state) {
                Ok(meanwhile(seen, now))
            } else if seen_allowed {
                Err(Refusal::Finished {
                    space: space.clone(),
                    was: seen.run_state,
                    now: now.run_state,
                })
            } else {
                Err(wrong_state())
            }
        }
        BootstrapKind::Retry => {
            if states.contains(&now.run_state) {
                if seen.run_state == now.run_state && seen.completed_at == now.completed_at {
                    Ok(meanwhile(seen, now))
                } else {
                    Err(Refusal::NewEpisode {
                        space: space.clone(),
                        now: now.run_state,
                        ended_at: now.completed_at,
                    })
                }
            } else if seen_allowed {
                Err(Refusal::RetriedMeanwhile {
                    space: space.clone(),
                    was: seen.run_state,
                    now: now.run_state,
                    by: None,
                })
            } else {
                Err(wrong_state())
            }
        }
    }
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
    use crate::domain::model::Checkpoint;
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
    fn progress_never_refuses_a_cancel_and_is_reported() {
        let seen = SeenBootstrap::from(&job(RunState::Running, 25, 30, None));
        let now = job(RunState::Running, 34, 39, None);
        assert_eq!(
            decide(
                BootstrapKind::Cancel,
                &seen,
                None,
                &now,
                &IdNames::default()
            ),
            Ok(Some("since you looked: progress 25 → 34 of 50".into()))
        );
        let claimed = SeenBootstrap::from(&job(RunState::Queued, 0, 3, None));
        assert_eq!(
            decide(
                BootstrapKind::Cancel,
                &claimed,
                None,
                &job(RunState::Running, 0, 4, None),
                &IdNames::default()
            ),
            Ok(Some("since you looked: queued → running".into()))
        );
    }

    #[test]
    fn a_cancel_of_a_job_that_finished_meanwhile_is_refused() {
        let seen = SeenBootstrap::from(&job(RunState::Running, 49, 30, None));
        let done = job(RunState::Succeeded, 50, 31, Some(5));
        let refusal = decide(
            BootstrapKind::Cancel,
            &seen,
            None,
            &done,
            &IdNames::default(),
        )
        .expect_err("refused");
        assert!(refusal.decision_changed());
        assert!(matches!(refusal, Refusal::Finished { .. }), "{refusal}");
    }

    #[test]
    fn retry_rests_on_the_same_episode() {
        let failed = job(RunState::Failed, 10, 12, Some(3));
        let seen = SeenBootstrap::from(&failed);
        // An unrelated write (same episode, new row version) does not refuse it.
        let touched = job(RunState::Failed, 10, 13, Some(3));
        assert_eq!(
            decide(
                BootstrapKind::Retry,
                &seen,
                None,
                &touched,
                &IdNames::default()
            ),
            Ok(Some(
                "since you looked: other columns changed (row_version 12 → 13)".into()
            ))
        );
        let retried = job(RunState::Queued, 10, 13, None);
        assert!(matches!(
            decide(
                BootstrapKind::Retry,
                &seen,
                None,
                &retried,
                &IdNames::default()
            ),
            Err(Refusal::RetriedMeanwhile {
                was: RunState::Failed,
                now: RunState::Queued,
                ..
            })
        ));
        let failed_again = job(RunState::Failed, 11, 20, Some(9));
        assert!(matches!(
            decide(
                BootstrapKind::Retry,
                &seen,
                None,
                &failed_again,
                &IdNames::default()
            ),
            Err(Refusal::NewEpisode { .. })
        ));
    }

    #[test]
    fn an_exact_row_version_refuses_any_write() {
        let seen = SeenBootstrap::from(&job(RunState::Running, 25, 30, None));
        let now = job(RunState::Running, 26, 31, None);
        assert!(matches!(
            decide(
                BootstrapKind::Cancel,
                &seen,
                Some(30),
                &now,
                &IdNames::default()
            ),
            Err(Refusal::Stale {
                seen: 30,
                now: 31,
                ..
            })
        ));
    }

    #[test]
    fn a_state_the_action_never_applied_to_is_a_plain_refusal() {
        let seen = SeenBootstrap::from(&job(RunState::Succeeded, 50, 9, Some(1)));
        let refusal = decide(
            BootstrapKind::Retry,
            &seen,
            None,
            &job(RunState::Succeeded, 50, 9, Some(1)),
            &IdNames::default(),
        )
        .expect_err("refused");
        assert!(!refusal.decision_changed());
        assert_eq!(
            refusal.to_string(),
            "space 00000000 is succeeded, retry needs failed or canceled"
        );
    }
}
