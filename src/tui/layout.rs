//! The screen's fixed geometry, shared by drawing and by `update` (which needs the page size to
//! scroll), so both always agree.

use ratatui::layout::{Constraint, Layout, Rect};

/// Title bar.
pub(crate) const TITLE: u16 = 1;
/// Rollout summary and the checkpoint × run-state matrix.
pub(crate) const SUMMARY: u16 = 7;
/// View tabs, filter and sort.
pub(crate) const TABS: u16 = 1;
/// Status line and key hints.
pub(crate) const FOOTER: u16 = 2;
/// The column header of a table.
pub(crate) const TABLE_HEADER: u16 = 1;

/// The named areas of the screen.
pub(crate) struct Areas {
    pub(crate) title: Rect,
    pub summary: Rect,
    pub(crate) tabs: Rect,
    pub(crate) body: Rect,
    pub status: Rect,
    pub(crate) hints: Rect,
}

pub(crate) fn areas(area: Rect) -> Areas {
    let [title, summary, tabs, body, status, hints] = Layout::vertical([
        Constraint::Length(TITLE),
        Constraint::Length(SUMMARY),
        Constraint::Length(TABS),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        title,
        summary,
        tabs,
        body,
        status,
        hints,
    }
}

/// How many table rows fit on a terminal of `size` (columns, rows).
pub(crate) fn table_rows(size: (u16, u16)) -> usize {
    let fixed = TITLE + SUMMARY + TABS + FOOTER + TABLE_HEADER;
    usize::from(size.1.saturating_sub(fixed).max(1))
}

/// From this width the board has its worker, error and message columns (the rows' messages
/// are then fetched).
pub(crate) const WIDE_BOARD: u16 = 110;
