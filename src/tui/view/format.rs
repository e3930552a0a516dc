//! Small text renderings shared by the views: ages, the checkpoint pipeline, progress bars.

use chrono::Duration;

use crate::domain::ids::IdNames;
use crate::domain::model::Checkpoint;
use crate::domain::signals::Attention;
pub use crate::domain::text::age;

/// Like [`age`], without seconds once past ten minutes: for narrow columns.
pub fn age_compact(duration: Duration) -> String {
    let seconds = duration.num_seconds();
    match seconds.unsigned_abs() {
        600..=3599 => format!(
            "{}{}m",
            if seconds < 0 { "-" } else { "" },
            seconds.abs() / 60
        ),
        _ => age(duration),
    }
}

/// The five checkpoints as a pipeline: done, current, still to come.
pub fn pipeline(current: Checkpoint, ascii: bool) -> String {
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
pub fn bar(fraction: f64, width: usize, ascii: bool) -> String {
    let (full, empty) = if ascii { ('#', '.') } else { ('█', '░') };
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    std::iter::repeat_n(full, filled)
        .chain(std::iter::repeat_n(empty, width - filled))
        .collect()
}

/// The attention flag as text, so state never depends on colour.
pub fn flag(attention: Attention) -> &'static str {
    match attention {
        Attention::Failed => "FAILED",
        Attention::Blocked => "BLOCKED",
        Attention::LeaseExpired => "EXPIRED",
        Attention::Stuck => "STUCK",
        Attention::HeartbeatLate => "LATE",
        Attention::Running => "run",
        Attention::Queued => "queued",
        Attention::Canceled => "cancel",
        Attention::Succeeded => "ok",
    }
}

/// A column that holds every shown id in scope (the same width on every page and frame): 8 to
/// 14 characters, more only for ids alike at both ends.
pub fn id_width(names: &IdNames) -> u16 {
    // Forms wider than usual (ids alike at both ends) are never cut: a cut form names
    // another id, or none.
    u16::try_from(names.widest()).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age(Duration::seconds(9)), "9s");
        assert_eq!(age(Duration::seconds(252)), "4m12s");
        assert_eq!(age(Duration::seconds(3 * 3600 + 300)), "3h05m");
        assert_eq!(age(Duration::seconds(-9)), "-9s");
    }

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
