//! How every table lays out its columns — the console's board, tenants, leases, audit and
//! health views, and the `status` table — in one place, so no screen squeezes what matters to
//! make room for what does not.
//!
//! Each column says what it holds by a [`Priority`], the least width worth showing, the most it
//! may take, and whether it takes what is left. Widths are given in priority order:
//!
//! 1. **flags** — the attention flag, checkpoint, state, progress figures, marks: short and
//!    always whole;
//! 2. **ids** — up to [`crate::domain::ids::MAX_SHOWN_WIDTH`]; a longer form (ids alike at
//!    both ends) is the scope-wide unique form cut as prefix…suffix, the same on every row and
//!    page (the whole id is in the detail and copied by `y`);
//! 3. **codes** — the error code, a lease's age, a worker's time left: whole error codes up
//!    to 24 characters at 80 columns;
//! 4. **tenants**;
//! 5. **messages** — the error message, a reason: whatever is left.
//!
//! First every column gets its least width, in that order, while the line has room (a column
//! that cannot get it is left out, lowest priority first); then each grows toward its most,
//! in the same order; then the filling column takes the rest. Whatever is cut to its width ends
//! in a visible mark (`…`, `~` where only ASCII is shown): nothing is cut silently.

use unicode_width::UnicodeWidthStr;

use crate::domain::ids::MAX_SHOWN_WIDTH;
use crate::text;

/// What a column holds, most important first (see the module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Flag,
    Id,
    Code,
    Tenant,
    Message,
}

/// How a value too wide for its column is cut (always with a mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Its end goes: words and codes read from the start.
    End,
    /// Its middle goes: ids and tenants numbered in series differ at the end.
    Middle,
    /// Its start goes: worker names differ at the end (`worker-2.1`).
    Start,
}

/// One column of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub title: &'static str,
    pub priority: Priority,
    /// The least width worth showing (less when every value is narrower).
    pub least: u16,
    /// The most it takes (its values' width when narrower).
    pub most: u16,
    /// It takes what is left once every column has its most.
    pub fill: bool,
    pub cut: Cut,
}

impl Column {
    pub const fn new(title: &'static str, priority: Priority, least: u16, most: u16) -> Self {
        Self {
            title,
            priority,
            least,
            most,
            fill: false,
            cut: Cut::End,
        }
    }

    /// A column whose values are cut as `cut` says.
    pub const fn cut(mut self, cut: Cut) -> Self {
        self.cut = cut;
        self
    }

    /// The column that takes what is left.
    pub const fn filling(mut self) -> Self {
        self.fill = true;
        self
    }
}

/// An id column whose ids in scope are at most `widest` wide: wide enough for every shown form
/// up to [`MAX_SHOWN_WIDTH`] (never cut below it), the unique form cut as prefix…suffix past it.
pub fn id_column(title: &'static str, widest: usize) -> Column {
    let width = u16::try_from(widest.min(MAX_SHOWN_WIDTH)).unwrap_or(1);
    Column::new(title, Priority::Id, width, width).cut(Cut::Middle)
}

/// The widths of `columns` on a line `width` cells wide, `spacing` cells between two shown
/// columns; `widest` is each column's widest value (with its title). A column left out gets 0.
pub fn widths(columns: &[Column], widest: &[u16], width: u16, spacing: u16) -> Vec<u16> {
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_by_key(|&i| columns[i].priority);
    let content = |i: usize| widest.get(i).copied().unwrap_or(0);
    let mut out = vec![0u16; columns.len()];
    let mut left = i32::from(width);
    // The least widths, most important first; the first column shown costs no spacing.
    for &i in &order {
        let c = &columns[i];
        // A column whose least is its most is fixed: the same width whatever is on the page
        // (its title never moves as rows scroll by). A filling one still gives way to narrow
        // values: it takes what is left anyway.
        let least = if c.least == c.most && !c.fill {
            c.least
        } else {
            c.least.min(content(i).max(1)).max(1)
        };
        let cost = i32::from(least)
            + if left == i32::from(width) {
                0
            } else {
                i32::from(spacing)
            };
        if cost <= left {
            out[i] = least;
            left -= cost;
        }
    }
    // Then toward the most, in the same order.
    for &i in &order {
        if out[i] == 0 {
            continue;
        }
        let c = &columns[i];
        let most = c.most.min(content(i)).max(out[i]);
        let grow = (i32::from(most - out[i])).min(left.max(0));
        out[i] += grow as u16;
        left -= grow;
    }
    // The rest to the filling column.
    if let Some(i) = columns.iter().position(|c| c.fill)
        && out[i] > 0
        && left > 0
    {
        out[i] += left as u16;
    }
    out
}

/// `value` in a column `width` cells wide, cut as `cut` says with a mark, padded.
pub fn fit(value: &str, width: u16, cut: Cut) -> String {
    let width = usize::from(width);
    match cut {
        Cut::End => text::fit(value, width),
        Cut::Middle => text::fit_middle(value, width),
        Cut::Start => fit_start(value, width),
    }
}

/// The end of `value` in `width` cells, a mark where its start was cut.
fn fit_start(value: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let cleaned = text::clean(value, 1000);
    if cleaned.width() <= width || width < 2 {
        return text::fit(&cleaned, width);
    }
    let mut kept = Vec::new();
    let mut used = 1;
    for ch in cleaned.chars().rev() {
        let w = ch.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(ch);
    }
    let mut out = String::from(text::ELLIPSIS);
    out.extend(kept.into_iter().rev());
    let pad = width.saturating_sub(out.width());
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// One line of a text table: each value fitted to its column (one space apart, columns left
/// out skipped), cut with a mark, its end trimmed.
pub fn text_line(columns: &[Column], widths: &[u16], values: &[&str]) -> String {
    let cells: Vec<String> = columns
        .iter()
        .zip(widths)
        .zip(values)
        .filter(|((_, w), _)| **w > 0)
        .map(|((c, w), v)| fit(v, *w, c.cut))
        .collect();
    cells.join(" ").trim_end().to_string()
}

/// The display width of `value` once cleaned (what [`fit`] measures).
pub fn width_of(value: &str) -> u16 {
    u16::try_from(text::clean(value, 1000).width()).unwrap_or(u16::MAX)
}

/// A table of text, laid out by [`widths`]: each column's widest value measured, every value
/// fitted to its column.
#[derive(Debug, Clone)]
pub struct Laid {
    pub widths: Vec<u16>,
}

impl Laid {
    /// Lays out `columns` for `rows` (each a value per column) on a line `width` wide.
    pub fn out<S: AsRef<str>>(
        columns: &[Column],
        rows: &[Vec<S>],
        width: u16,
        spacing: u16,
    ) -> Self {
        let widest: Vec<u16> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                rows.iter()
                    .filter_map(|row| row.get(i))
                    .map(|v| width_of(v.as_ref()))
                    .chain([width_of(c.title)])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        Self {
            widths: widths(columns, &widest, width, spacing),
        }
    }

    /// Whether column `i` is shown.
    pub fn shown(&self, i: usize) -> bool {
        self.widths.get(i).is_some_and(|w| *w > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAG: Column = Column::new("flag", Priority::Flag, 7, 7);
    const ID: Column = Column::new("space", Priority::Id, 8, 14).cut(Cut::Middle);
    const CODE: Column = Column::new("error", Priority::Code, 24, 64);
    const TENANT: Column = Column::new("tenant", Priority::Tenant, 4, 16).cut(Cut::Middle);
    const MESSAGE: Column = Column::new("message", Priority::Message, 8, 400).filling();

    #[test]
    fn codes_stay_whole_before_tenants_get_room() {
        let columns = [FLAG, TENANT, ID, CODE, MESSAGE];
        // A 24-character code and 32-digit ids on a 52-cell line.
        let widest = [7, 12, 32, 24, 40];
        let w = widths(&columns, &widest, 52, 1);
        assert_eq!(w[0], 7);
        assert_eq!(w[2], 14, "ids get their cap");
        assert_eq!(w[3], 24, "the code whole");
        assert_eq!(w[1], 4, "the tenant gets what is left");
        assert_eq!(w[4], 0, "no room for the message");
        assert_eq!(w.iter().sum::<u16>() + 3, 52);
    }

    #[test]
    fn the_message_takes_whatever_is_left() {
        let columns = [FLAG, TENANT, ID, CODE, MESSAGE];
        let widest = [7, 12, 8, 20, 300];
        let w = widths(&columns, &widest, 160, 1);
        assert_eq!(&w[..4], &[7, 12, 8, 20]);
        assert_eq!(w[4], 160 - 7 - 12 - 8 - 20 - 4);
    }

    #[test]
    fn every_cut_value_ends_in_a_mark() {
        assert_eq!(
            fit("embedding_quota_exceeded_x", 24, Cut::End),
            "embedding_quota_exceede…"
        );
        assert_eq!(fit("worker-eu-west-2.17", 8, Cut::Start), "…st-2.17");
        assert_eq!(fit("worker-eu-west-2.17", 8, Cut::Start).width(), 8);
        let id = "00000000000040008000000000000001";
        let cut = fit(id, 14, Cut::Middle);
        assert!(cut.starts_with("000000") && cut.ends_with("000001") && cut.contains('…'));
        assert_eq!(fit("short", 8, Cut::Middle), "short   ");
    }

    #[test]
    fn a_filling_column_of_short_values_leaves_the_tenant_its_room() {
        let code = Column::new("worker/lease/error", Priority::Code, 24, 24).filling();
        let columns = [FLAG, TENANT, ID, code];
        // Codes of 13 on the page: the tenant gets its most, the code column the rest.
        let w = widths(&columns, &[7, 16, 12, 13], 80, 1);
        assert_eq!(w[1], 16);
        assert_eq!(w[3], 80 - 7 - 16 - 12 - 3);
    }
}
