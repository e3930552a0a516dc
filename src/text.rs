//! Untrusted text (domain contract §4, see [`crate::domain`]). Error messages, worker ids,
//! tenant ids, operations and metadata are written by other programs; before any of it
//! reaches a terminal it passes through here.
//!
//! Terminal escape sequences (7-bit `ESC …` and their 8-bit C1 forms: CSI, OSC, DCS, SOS, PM,
//! APC) are removed whole and shown as `␛`, so a hostile value can neither retitle, clear nor
//! recolour the operator's terminal, and the operator can still see that something was there.
//! Other control characters, bidirectional overrides and invisible characters are shown as
//! what they are, escaped the way Rust writes them (`\u{202e}`). Line breaks and tabs become
//! spaces (or separate lines in the multi-line form). Lengths are bounded.
//!
//! Where only ASCII may be written (`--ascii`, a locale that is not UTF-8), text cleaned while
//! [`in_ascii`] runs is ASCII too: the console's own glyphs in their ASCII forms, a removed
//! escape sequence as `\e`, every other character escaped. Cleaning twice (a sentence made of
//! cleaned text, cleaned again where it is drawn) keeps what the first pass said.

use std::cell::Cell;

thread_local! {
    static ASCII: Cell<bool> = const { Cell::new(false) };
}

/// Runs `draw` with text cleaned for an ASCII-only terminal when `ascii` is set (on this
/// thread: drawing one frame is synchronous). The previous mode comes back however `draw`
/// ends, a panic included.
pub(crate) fn in_ascii<T>(ascii: bool, draw: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ASCII.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(ASCII.with(|cell| cell.replace(ascii)));
    draw()
}

/// The ASCII form of a glyph the console draws (arrows, dashes, the marks of this module).
pub(crate) fn ascii_glyph(ch: char) -> Option<&'static str> {
    Some(match ch {
        '…' => "~",
        '·' | '•' => ".",
        '—' | '–' | '─' => "-",
        '→' | '›' => ">",
        '←' => "<",
        '↑' => "^",
        '↓' => "v",
        '│' => "|",
        '×' => "x",
        ESCAPE_MARK => "\\e",
        _ => return None,
    })
}

/// `text` (already cleaned) in ASCII for a terminal that shows nothing else: the console's
/// glyphs in their ASCII forms, any other character escaped (`\u{6f22}`); lines kept.
pub(crate) fn to_ascii(text: &str) -> String {
    if text.is_ascii() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        match (ch.is_ascii(), ascii_glyph(ch)) {
            (true, _) => out.push(ch),
            (false, Some(glyph)) => out.push_str(glyph),
            (false, None) => out.push_str(&escaped(ch)),
        }
    }
    out
}

/// Appends `piece` as shown: itself, or a mark or an escape (see the module's comment).
fn push_piece(out: &mut String, piece: &Piece, ascii: bool) {
    match (piece, ascii) {
        (Piece::Char(ch), true) if !ch.is_ascii() => match ascii_glyph(*ch) {
            Some(glyph) => out.push_str(glyph),
            None => out.push_str(&escaped(*ch)),
        },
        (Piece::Char(ch), _) => out.push(*ch),
        (Piece::Escape, false) => out.push(ESCAPE_MARK),
        (Piece::Escape, true) => out.push_str("\\e"),
        (Piece::Control(ch), _) => out.push_str(&escaped(*ch)),
    }
}

/// `ch` as Rust writes it in a string: `\u{202e}`.
fn escaped(ch: char) -> String {
    format!("\\u{{{:x}}}", u32::from(ch))
}

/// Shown where an escape sequence was removed.
pub(crate) const ESCAPE_MARK: char = '␛';
/// Appended when a value was cut short.
pub(crate) const ELLIPSIS: char = '…';

/// One line of display-safe text, at most `max_chars` characters (including the ellipsis).
pub fn clean(text: &str, max_chars: usize) -> String {
    let ascii = ASCII.with(Cell::get);
    let mut out = String::with_capacity(text.len().min(max_chars * 4));
    for piece in Pieces::new(text) {
        match piece {
            Piece::Char('\n' | '\r' | '\t') => out.push(' '),
            piece => push_piece(&mut out, &piece, ascii),
        }
    }
    bound(out, max_chars)
}

/// Display-safe lines: at most `max_lines`, each at most `max_chars` characters. A line ends
/// at LF or CRLF; a lone CR (which a terminal would obey, writing the rest over the start) is
/// shown as `\r`.
pub(crate) fn clean_lines(text: &str, max_lines: usize, max_chars: usize) -> Vec<String> {
    let ascii = ASCII.with(Cell::get);
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut pieces = Pieces::new(text).peekable();
    while let Some(piece) = pieces.next() {
        match piece {
            Piece::Char('\n') => lines.push(std::mem::take(&mut current)),
            Piece::Char('\r') if matches!(pieces.peek(), Some(Piece::Char('\n'))) => {}
            Piece::Char('\r') => current.push_str("\\r"),
            Piece::Char('\t') => current.push_str("    "),
            piece => push_piece(&mut current, &piece, ascii),
        }
    }
    lines.push(current);
    let truncated = lines.len() > max_lines;
    lines.truncate(max_lines);
    let mut lines: Vec<String> = lines.into_iter().map(|l| bound(l, max_chars)).collect();
    if truncated && let Some(last) = lines.last_mut() {
        last.push(ELLIPSIS);
    }
    lines
}

/// [`clean`] text in a column of exactly `width` terminal cells: cut with an ellipsis where
/// it is wider, padded with spaces where narrower — by display width, so wide (CJK) and
/// combining characters keep a table's columns aligned.
pub(crate) fn fit(text: &str, width: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let cleaned = clean(text, width.max(1) * 4);
    let mut out = String::new();
    if cleaned.width() <= width {
        out.push_str(&cleaned);
    } else {
        let room = width.saturating_sub(1);
        let mut used = 0;
        for ch in cleaned.chars() {
            let w = ch.width().unwrap_or(0);
            if used + w > room {
                break;
            }
            used += w;
            out.push(ch);
        }
        if width > 0 {
            out.push(ELLIPSIS);
        }
    }
    let pad = width.saturating_sub(out.width());
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// [`fit`], cutting from the middle when the text is too wide (`ten…-712`): names that
/// differ at the end — tenants numbered in series — stay told apart.
pub(crate) fn fit_middle(text: &str, width: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let cleaned = clean(text, 1000);
    if cleaned.width() <= width || width < 5 {
        return fit(&cleaned, width);
    }
    let room = width - 1;
    let keep_end = room - room / 2;
    let mut tail = Vec::new();
    let mut used = 0;
    for ch in cleaned.chars().rev() {
        let w = ch.width().unwrap_or(0);
        if used + w > keep_end {
            break;
        }
        used += w;
        tail.push(ch);
    }
    let head = fit(&cleaned, room - used + 1);
    // `fit` ends a cut head with its own ellipsis: it stands for the middle.
    let head = head.trim_end_matches(' ');
    let head = head.strip_suffix(ELLIPSIS).unwrap_or(head);
    let mut out: String = head.to_string();
    out.push(ELLIPSIS);
    out.extend(tail.into_iter().rev());
    let pad = width.saturating_sub(out.width());
    out.extend(std::iter::repeat_n(' ', pad));
    out
}

/// A short, quoted-safe excerpt for error messages (`Debug` formatting escapes the rest).
pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    bound(text.chars().take(max_chars + 1).collect(), max_chars)
}

fn bound(mut text: String, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text;
    }
    let keep = max_chars.saturating_sub(1);
    let cut = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    text.truncate(cut);
    if max_chars > 0 {
        text.push(ELLIPSIS);
    }
    text
}

enum Piece {
    Char(char),
    Escape,
    /// A control, bidi or invisible character.
    Control(char),
}

/// Splits text into printable characters, whole escape sequences and stray controls.
struct Pieces<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            chars: text.chars().peekable(),
        }
    }

    /// After a CSI introducer: parameters and intermediates, up to the final byte.
    fn skip_csi(&mut self) {
        for ch in self.chars.by_ref() {
            if ('\u{40}'..='\u{7e}').contains(&ch) {
                return;
            }
        }
    }

    /// After an OSC/DCS/SOS/PM/APC introducer: everything up to BEL, ST (`ESC \`) or 8-bit ST.
    fn skip_string(&mut self) {
        while let Some(ch) = self.chars.next() {
            match ch {
                '\u{07}' | '\u{9c}' => return,
                '\u{1b}' => {
                    if self.chars.peek() == Some(&'\\') {
                        self.chars.next();
                    }
                    return;
                }
                _ => {}
            }
        }
    }

    /// After ESC: the rest of the sequence, whatever its kind.
    fn skip_after_escape(&mut self) {
        match self.chars.next() {
            Some('[') => self.skip_csi(),
            Some(']' | 'P' | 'X' | '^' | '_') => self.skip_string(),
            // nF sequences: intermediates (0x20–0x2F) then one final character.
            Some(ch) if ('\u{20}'..='\u{2f}').contains(&ch) => {
                for next in self.chars.by_ref() {
                    if !('\u{20}'..='\u{2f}').contains(&next) {
                        break;
                    }
                }
            }
            // Two-character sequences (ESC c resets the terminal, ESC 7/8, …) or a lone ESC.
            _ => {}
        }
    }
}

impl Iterator for Pieces<'_> {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        let ch = self.chars.next()?;
        Some(match ch {
            '\u{1b}' => {
                self.skip_after_escape();
                Piece::Escape
            }
            '\u{9b}' => {
                self.skip_csi();
                Piece::Escape
            }
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => {
                self.skip_string();
                Piece::Escape
            }
            '\n' | '\r' | '\t' => Piece::Char(ch),
            c if c.is_control() || is_bidi_control(c) || is_invisible_format(c) => {
                Piece::Control(c)
            }
            c => Piece::Char(c),
        })
    }
}

/// A character that does not show as itself: a control, bidirectional or invisible one.
pub(crate) fn is_hidden(ch: char) -> bool {
    ch.is_control() || is_bidi_control(ch) || is_invisible_format(ch)
}

/// Characters that reorder the text around them (the "Trojan Source" family).
fn is_bidi_control(ch: char) -> bool {
    matches!(ch, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Zero-width and other invisible characters that hide content or break alignment (tags,
/// soft hyphens, invisible operators), and the line and paragraph separators.
fn is_invisible_format(ch: char) -> bool {
    matches!(
        ch,
        '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{feff}'
            | '\u{00ad}'
            | '\u{180e}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{e0000}'..='\u{e007f}'
            | '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{3164}'
            | '\u{ffa0}'
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn fit_aligns_by_display_width() {
        use unicode_width::UnicodeWidthStr;
        for value in ["acme", "株式会社アクメ", "e\u{301}cole", "a\u{1b}[2Jb", "x"] {
            for width in [1, 4, 10] {
                let fitted = fit(value, width);
                assert_eq!(fitted.width(), width, "{value:?} in {width}: {fitted:?}");
            }
        }
        assert_eq!(fit("株式会社アクメ", 6), "株式… ");
        assert_eq!(fit("école", 6), "école ");
    }

    use super::*;

    #[test]
    fn ascii_only_text_says_what_it_held() {
        let hostile = "株\u{202e}x\u{1b}[2Jy\té";
        let shown = super::in_ascii(true, || super::clean(hostile, 100));
        assert_eq!(shown, "\\u{682a}\\u{202e}x\\ey \\u{e9}");
        assert!(shown.is_ascii());
        let lines = super::in_ascii(true, || super::clean_lines("a\u{202e}\nb", 5, 100));
        assert_eq!(lines, ["a\\u{202e}", "b"]);
        // Cleaned once outside the scope (a sentence), then again where it is drawn: what the
        // first pass said survives, and the console's glyphs take their ASCII forms.
        let sentence = format!("tenant {} → {}", super::clean(hostile, 100), "done");
        let drawn = super::in_ascii(true, || super::clean(&sentence, 200));
        assert_eq!(drawn, "tenant \\u{682a}\\u{202e}x\\ey \\u{e9} > done");
        // Only inside the scope, and the scope ends even when its work panics.
        assert_eq!(super::clean("é", 10), "é");
        let panicked = std::panic::catch_unwind(|| super::in_ascii(true, || panic!("draw")));
        assert!(panicked.is_err());
        assert_eq!(super::clean("é", 10), "é");
    }

    #[test]
    fn a_middle_cut_keeps_both_ends() {
        use unicode_width::UnicodeWidthStr;
        assert_eq!(super::fit_middle("tenant-712", 8), "ten…-712");
        assert_eq!(super::fit_middle("tenant-7", 8), "tenant-7");
        assert_eq!(super::fit_middle("acme", 8), "acme    ");
        for value in [
            "株式会社アクメ-712",
            "e\u{301}cole-de-paris",
            "x\u{1b}[2Jyyyyyyyyy",
        ] {
            assert_eq!(super::fit_middle(value, 8).width(), 8, "{value}");
        }
    }

    #[test]
    fn plain_text_passes_unchanged() {
        assert_eq!(
            clean("compile failed: größe 3", 100),
            "compile failed: größe 3"
        );
    }

    #[test]
    fn csi_sequences_are_removed_whole() {
        assert_eq!(clean("a\u{1b}[2J\u{1b}[31mred\u{1b}[0m", 100), "a␛␛red␛");
    }

    #[test]
    fn an_osc_title_change_is_removed_whole() {
        assert_eq!(clean("x\u{1b}]0;pwned\u{7}y", 100), "x␛y");
        assert_eq!(clean("x\u{1b}]52;c;ZXZpbA==\u{1b}\\y", 100), "x␛y");
    }

    #[test]
    fn eight_bit_c1_sequences_are_removed_whole() {
        assert_eq!(clean("a\u{9b}31mb", 100), "a␛b");
        assert_eq!(clean("a\u{9d}0;t\u{9c}b", 100), "a␛b");
        assert_eq!(clean("a\u{85}b", 100), "a\\u{85}b");
    }

    #[test]
    fn a_reset_sequence_and_stray_controls_are_neutralised() {
        assert_eq!(clean("\u{1b}cok\u{7}\u{8}", 100), "␛ok\\u{7}\\u{8}");
    }

    #[test]
    fn bidi_overrides_and_invisible_characters_are_shown_escaped() {
        assert_eq!(clean("abc\u{202e}fed", 100), "abc\\u{202e}fed");
        assert_eq!(clean("a\u{2067}b\u{200b}", 100), "a\\u{2067}b\\u{200b}");
    }

    #[test]
    fn line_breaks_cannot_break_a_single_line() {
        assert_eq!(clean("one\ntwo\r\tthree", 100), "one two  three");
    }

    #[test]
    fn long_values_are_bounded_with_an_ellipsis() {
        assert_eq!(clean("abcdefgh", 5), "abcd…");
        assert_eq!(clean("abcde", 5), "abcde");
        assert_eq!(clean(&"é".repeat(10_000), 3).chars().count(), 3);
    }

    #[test]
    fn multi_line_text_is_split_and_bounded() {
        let lines = clean_lines("first\nsecond \u{1b}[1mbold\nthird\nfourth", 3, 8);
        assert_eq!(lines, vec!["first", "second …", "third…"]);
    }

    #[test]
    fn an_unterminated_sequence_swallows_only_itself() {
        assert_eq!(clean("ok\u{1b}]0;never ends", 100), "ok␛");
        assert_eq!(clean("ok\u{1b}", 100), "ok␛");
    }

    #[test]
    fn a_lone_cr_is_shown_and_crlf_ends_a_line() {
        let lines = clean_lines("one\r\ntwo\rover\nthree", 10, 100);
        assert_eq!(lines, vec!["one", "two\\rover", "three"]);
    }
}
