//! Cursors and scrolling: where the cursor of each view is, and keeping it on screen and on
//! the selected space as the rows change under it.

use super::super::app::{App, ListState, View};
use super::super::layout;
use crate::poller::{Extra, Focus};

/// Finds the selected space in the current view (or selects what is under the cursor).
pub(super) fn follow_selection(app: &mut App) {
    let Some(view) = app.board_view() else {
        return;
    };
    // Until the operator moves, trouble stays in view: the most urgent row is selected.
    if app.board.following_top {
        app.board.cursor = 0;
        app.board.selected = app.row_at(0).map(|r| r.id);
        return;
    }
    let position = app.board.selected.and_then(|id| view.position_of(&id));
    let len = view.len();
    match position {
        Some(position) => app.board.cursor = position,
        None => app.board.cursor = app.board.cursor.min(len.saturating_sub(1)),
    }
    app.board.selected = app.row_at(app.board.cursor).map(|r| r.id);
}

fn board_len(app: &App) -> usize {
    app.board_view().map_or(0, |v| v.len())
}

pub(super) fn keep_cursors_visible(app: &mut App) {
    let page = layout::table_rows(app.size);
    let board_len = board_len(app);
    let b = &mut app.board;
    b.cursor = b.cursor.min(board_len.saturating_sub(1));
    scroll_to(&mut b.offset, b.cursor, page, board_len);
    for view in [View::Tenants, View::Leases, View::Audit, View::Health] {
        // A list whose data is not loaded (another view has the focus) keeps its place: Esc
        // from a detail comes back to the line it was opened from.
        let Some(len) = list_len(app, &view) else {
            continue;
        };
        if let Some(list) = list_state(app, &view) {
            list.cursor = list.cursor.min(len.saturating_sub(1));
            scroll_to(&mut list.offset, list.cursor, page, len);
        }
    }
}

fn scroll_to(offset: &mut usize, cursor: usize, page: usize, len: usize) {
    if cursor < *offset {
        *offset = cursor;
    } else if cursor >= *offset + page {
        *offset = cursor + 1 - page;
    }
    *offset = (*offset).min(len.saturating_sub(page));
}

pub(super) fn list_state<'a>(app: &'a mut App, view: &View) -> Option<&'a mut ListState> {
    match view {
        View::Tenants => Some(&mut app.tenants),
        View::Leases => Some(&mut app.leases),
        View::Audit => Some(&mut app.audit),
        View::Health => Some(&mut app.health_view.list),
        View::Board | View::Detail(_) => None,
    }
}

fn list_len(app: &App, view: &View) -> Option<usize> {
    Some(match view {
        View::Tenants => app.fleet().map_or(0, |f| f.tenants.len()),
        View::Leases => match app.extra_for(&Focus::Leases)? {
            Extra::Leases(board) => board.leases.len(),
            _ => 0,
        },
        View::Audit => match app.extra_for(&Focus::Audit)? {
            Extra::Audit(records) => records.len(),
            _ => 0,
        },
        View::Health => app.health_view.listed_len(),
        View::Board | View::Detail(_) => 0,
    })
}

pub(super) fn move_cursor(app: &mut App, delta: isize) {
    let step = |cursor: usize, len: usize| {
        let last = len.saturating_sub(1) as isize;
        (cursor as isize)
            .saturating_add(delta)
            .clamp(0, last.max(0)) as usize
    };
    match app.view.clone() {
        View::Board => {
            app.board.cursor = step(app.board.cursor, board_len(app));
            app.board.selected = app.row_at(app.board.cursor).map(|r| r.id);
            // A move of the operator's own: the chosen space is followed from now on (`g`
            // follows the top again, see `on_command`).
            app.board.following_top = false;
        }
        View::Detail(id) => {
            let last = i64::from(crate::tui::view::detail::max_scroll(app, &id));
            let scrolled = i64::from(app.detail.scroll) + delta.clamp(-10_000, 10_000) as i64;
            app.detail.scroll = scrolled.clamp(0, last) as u16;
        }
        view => {
            let len = list_len(app, &view).unwrap_or(0);
            if let Some(list) = list_state(app, &view) {
                list.cursor = step(list.cursor, len);
            }
        }
    }
    keep_cursors_visible(app);
}
