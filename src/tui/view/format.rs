//! Small text renderings shared by the views: the checkpoint pipeline, progress bars.

use crate::columns::Cut;
use crate::domain::ids::{IdNames, MAX_SHOWN_WIDTH};
use crate::domain::model::Checkpoint;
use crate::domain::signals::Attention;
use crate::domain::text;
/// The five checkpoints as a pipeline: done, current, still to come.
pub(crate) fn pipeline(current: Checkpoint, ascii: bool) -> String {
    let (done, here, todo) = if ascii {
        ('#', '@', '.')
    } else {
        ('●', '◉', '○')
    };
    Checkpoint::ALL
        .iter()
        .map(|c| match c.index().cmp(&current.index()) {
            std::cmp::Ordering::Less => done,
            std::cmp::Ordering::Equal => here,
            std::cmp::Ordering::Greater => todo,
        })
        .collect()
}

/// A bar of `width` cells filled to `fraction`.
pub(crate) fn bar(fraction: f64, width: usize, ascii: bool) -> String {
    let (full, empty) = if ascii { ('#', '.') } else { ('█', '░') };
    // Full only when done, empty only when nothing is: 49 of 50 is not a full bar.
    let fraction = fraction.clamp(0.0, 1.0);
    let filled = ((fraction * width as f64).round() as usize).min(width);
    let filled = match filled {
        n if n == width && fraction < 1.0 => width.saturating_sub(1),
        0 if fraction > 0.0 => 1.min(width),
        n => n,
    };
    std::iter::repeat_n(full, filled)
        .chain(std::iter::repeat_n(empty, width - filled))
        .collect()
}

/// The attention flag as text, so state never depends on colour.
pub(crate) fn flag(attention: Attention) -> &'static str {
    match attention {
        Attention::Failed => "FAILED",
        Attention::Blocked => "BLOCKED",
        Attention::LeaseExpired => "EXPIRED",
        Attention::Stuck => "STUCK",
        // Watched, not acted on: in lower case beside the flags that need an operator.
        Attention::Reclaiming => "reclaim",
        Attention::HeartbeatLate => "late",
        Attention::Writing => "writing",
        Attention::Running => "run",
        Attention::Queued => "queued",
        Attention::Canceled => "cancel",
        Attention::Succeeded => "ok",
    }
}

/// An id as a line shows it beside others: its scope-wide unique form, cut as prefix…suffix
/// past [`MAX_SHOWN_WIDTH`] (ids alike at both ends), the same on every row and page.
pub(crate) fn id(names: &IdNames, id: &uuid::Uuid) -> String {
    crate::columns::fit(&names.short(id), MAX_SHOWN_WIDTH as u16, Cut::Middle)
        .trim_end()
        .to_string()
}

/// An audit record's action as the audit tables show it (8 columns): `rm lease`.
pub(crate) fn short_action(action: &str) -> String {
    if action == crate::domain::actions::Kind::RemoveLease.name() {
        "rm lease".to_string()
    } else {
        text::clean(action, 24)
    }
}

/// An audit record's outcome as the audit tables show it: a forced action stands out even at
/// 80 columns.
pub(crate) fn short_outcome(outcome: &str) -> String {
    if crate::domain::actions::outcome_is_forced(outcome) {
        "FORCED".to_string()
    } else {
        text::clean(outcome, 16)
    }
}

/// What holds a space, as the board's worker/lease column and `status` write it: the worker
/// and its lease's time left (`exp 45s` once expired), the blocking mutation lease's age and
/// operation (`lease? 2h00m` for an orphan suspect), or how long a stuck job has been quiet
/// (`idle 12m`). With the cut that keeps what matters: a worker's figure, a lease's age.
pub(crate) fn holder(
    row: &crate::domain::board::BoardRow,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<(String, crate::columns::Cut)> {
    use crate::columns::Cut;
    use crate::domain::{duration, text};
    let s = &row.signals;
    match (&row.worker, &row.lease) {
        // A stuck job's worker holds a live lease without progress: how long it has been
        // quiet matters, not the lease's time left.
        (Some(w), _) if s.stuck && !s.lease_expired => Some((
            format!(
                "{} idle {}",
                text::clean(&w.worker_id, 64),
                duration::compact(row.idle_for(now))
            ),
            Cut::Start,
        )),
        (Some(w), _) => {
            let left = row.lease_remaining(now).unwrap_or_default();
            let left = if s.lease_expired {
                format!("exp {}", duration::human(-left))
            } else {
                duration::human(left)
            };
            Some((
                format!("{} {left}", text::clean(&w.worker_id, 64)),
                Cut::Start,
            ))
        }
        (None, Some(lease)) => {
            let age = row
                .lease_age(now)
                .map(duration::compact)
                .unwrap_or_default();
            let suspect = if s.lease_orphan_suspect { "?" } else { "" };
            let operation = text::clean(&lease.operation, 20);
            Some((format!("lease{suspect} {age} {operation}"), Cut::End))
        }
        // A stuck job has neither: how long it has been quiet is what matters.
        (None, None) if s.stuck => Some((
            format!("idle {}", duration::compact(row.idle_for(now))),
            Cut::End,
        )),
        (None, None) => None,
    }
}

/// What the one narrow last column shows of a holder and an error: a blocked space's lease
/// (its age is what matters), else the error code (a failed job has no worker), else the
/// holder — on the board at 80 columns and in `status` alike.
pub(crate) fn narrow_last<T>(
    row: &crate::domain::board::BoardRow,
    holder: Option<T>,
    error: Option<T>,
) -> Option<T> {
    if row.signals.blocked_by_lease {
        holder.or(error)
    } else {
        error.or(holder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipeline_marks_the_current_checkpoint() {
        assert_eq!(pipeline(Checkpoint::Rebuilding, false), "●●◉○○");
        assert_eq!(pipeline(Checkpoint::PendingSnapshot, true), "@....");
        assert_eq!(pipeline(Checkpoint::Published, true), "####@");
    }

    #[test]
    fn bars_fill_proportionally() {
        assert_eq!(bar(0.5, 4, true), "##..");
        assert_eq!(bar(1.5, 3, false), "███");
        assert_eq!(bar(0.0, 2, false), "░░");
    }
}
