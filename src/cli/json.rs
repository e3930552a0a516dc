//! How every command writes JSON: serde, through a formatter that keeps database text exactly
//! but escapes what a terminal showing it would obey or hide. serde already escapes C0
//! controls; this also escapes every other character the console treats as hidden
//! ([`text::is_hidden`]: C1 controls, bidirectional overrides and marks, zero-width and
//! invisible format characters, line separators — `\u009b`, `\u202e`), so the output is valid
//! JSON that is safe to print.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter, Serializer};
use serde_json::value::RawValue;

use crate::domain::text;

/// `value` pretty-printed (two spaces), terminal-safe, with a final line break.
pub(crate) fn pretty<T: Serialize>(value: &T) -> String {
    let mut out = Vec::new();
    write_pretty(&mut out, value).expect("writing JSON to memory cannot fail");
    out.push(b'\n');
    String::from_utf8(out).expect("serde writes UTF-8")
}

/// `value` pretty-printed to `writer`, terminal-safe.
pub(crate) fn write_pretty<W: Write, T: Serialize>(writer: W, value: &T) -> io::Result<()> {
    let formatter = TerminalSafe(PrettyFormatter::with_indent(b"  "));
    value
        .serialize(&mut Serializer::with_formatter(writer, formatter))
        .map_err(io::Error::other)
}

/// `value` on one line, terminal-safe: a document that embeds it as a [`RawValue`] (one record
/// per line) stays a file one can `grep`.
pub(crate) fn line<T: Serialize>(value: &T) -> Box<RawValue> {
    let mut out = Vec::new();
    value
        .serialize(&mut Serializer::with_formatter(
            &mut out,
            TerminalSafe(CompactFormatter),
        ))
        .expect("writing JSON to memory cannot fail");
    let text = String::from_utf8(out).expect("serde writes UTF-8");
    RawValue::from_string(text).expect("serde wrote valid JSON")
}

/// Whether a terminal would act on `c`, or show nothing for it, though JSON allows it
/// unescaped: the console's one rule for hidden text.
fn risky(c: char) -> bool {
    text::is_hidden(c)
}

/// A formatter that writes like `F`, string contents escaped as [`risky`] says.
struct TerminalSafe<F>(F);

impl<F: Formatter> Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Printable ASCII, nearly all of a document, needs no look at each character.
        if fragment.bytes().all(|b| (b' '..b'\x7f').contains(&b)) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|(_, c)| risky(*c)) {
            writer.write_all(&rest.as_bytes()[..at])?;
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        self.0.write_char_escape(writer, escape)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_key(writer)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_characters_are_escaped_and_the_json_still_parses() {
        let value =
            serde_json::json!({"m": "a\u{9b}31mb\u{202e}c\u{1b}d\u{2067}é\u{200b}\u{2028}\u{7f}"});
        for text in [pretty(&value), line(&value).get().to_string()] {
            // Line breaks are the pretty form's own; every other hidden character is escaped.
            assert!(!text.chars().any(|c| risky(c) && c != '\n'), "{text:?}");
            assert!(!text.contains('\u{1b}'), "{text:?}");
            for escaped in [
                "\\u009b", "\\u202e", "\\u2067", "\\u200b", "\\u2028", "\\u007f",
            ] {
                assert!(text.contains(escaped), "{escaped} in {text}");
            }
            let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(back, value, "the text itself is kept exactly");
        }
    }

    #[test]
    fn a_line_is_one_line_and_pretty_is_indented_by_two() {
        let value = serde_json::json!({"a": [1, {"b": "x\ny"}]});
        assert_eq!(line(&value).get(), r#"{"a":[1,{"b":"x\ny"}]}"#);
        assert!(pretty(&value).starts_with("{\n  \"a\": [\n    1,"));
    }
}
