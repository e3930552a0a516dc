//! Ids as operators read and type them. Shown: the shortest prefix of the 32-hex form that no
//! other id in scope shares (at least 8 digits, like git's abbreviated hashes), or — when ids
//! share more than 12 leading digits, as ids minted from a clock or a sequence do — the
//! shortest distinguishing suffix, marked `..`; ids alike at both ends with others (a counter
//! under a constant) by their first digits and last eight, `4..00000239`. Typed: a whole UUID, the first hex digits of
//! one, or `..` and its last digits (hyphens ignored), resolved to the one id they name.

use uuid::Uuid;

/// The fewest digits a typed prefix or suffix may have: shorter ones name too many ids.
pub(crate) const MIN_PREFIX_DIGITS: usize = 4;

/// The fewest digits an id is shown with.
pub(crate) const SHOWN_DIGITS: usize = 8;

/// The most leading digits an id is shown with before a suffix says more.
pub(crate) const MAX_SHOWN_PREFIX: usize = 12;

/// What marks a suffix: ASCII, so that it reads the same on every terminal and in scripts.
pub(crate) const SUFFIX_MARK: &str = "..";

/// The widest form ids alike at only one end take: a 12-digit prefix or a marked 12-digit
/// suffix (ids alike at both ends take more).
pub(crate) const MAX_SHOWN_WIDTH: usize = MAX_SHOWN_PREFIX + SUFFIX_MARK.len();

/// An id argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdArg {
    Whole(Uuid),
    Prefix(IdPrefix),
    /// The last hex digits of an id, as shown with [`SUFFIX_MARK`].
    Suffix(String),
    /// The first and the last hex digits of an id, as shown around [`SUFFIX_MARK`]
    /// (`4..00000239`).
    Both(IdPrefix, String),
}

impl IdArg {
    /// How the argument names ids, for "no id … it".
    pub(crate) fn how_it_names(&self) -> &'static str {
        match self {
            Self::Whole(_) => "equals",
            Self::Prefix(_) => "starts with",
            Self::Suffix(_) => "ends with",
            Self::Both(..) => "starts and ends with",
        }
    }

    /// Whether the argument names `id`.
    #[cfg(test)]
    pub(crate) fn names(&self, id: &Uuid) -> bool {
        let hex = id.simple().to_string();
        match self {
            Self::Whole(whole) => whole == id,
            Self::Prefix(prefix) => hex.starts_with(&prefix.digits),
            Self::Suffix(digits) => hex.ends_with(digits.as_str()),
            Self::Both(prefix, digits) => {
                hex.starts_with(&prefix.digits) && hex.ends_with(digits.as_str())
            }
        }
    }

    /// The argument as it was typed, hyphens aside.
    pub(crate) fn typed(&self) -> String {
        match self {
            Self::Whole(id) => id.to_string(),
            Self::Prefix(prefix) => prefix.digits.clone(),
            Self::Suffix(digits) => format!("{SUFFIX_MARK}{digits}"),
            Self::Both(prefix, digits) => format!("{}{SUFFIX_MARK}{digits}", prefix.digits),
        }
    }
}

/// The first hex digits of an id, and the range of ids that start with them (so that they are
/// found through the primary key, not by a scan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdPrefix {
    pub(crate) digits: String,
    pub(crate) first: Uuid,
    pub(crate) last: Uuid,
}

/// What an id argument may be, for the sentence that refuses one.
const NOT_AN_ID: &str =
    "not a UUID, its first hex digits, `..` and its last ones, or first and last around `..`";

/// Reads an id argument; `Err` says why it is not one.
pub(crate) fn parse_id_arg(text: &str) -> Result<IdArg, String> {
    let text = text.trim();
    // First and last digits around the mark, as ids alike at both ends are shown.
    if let Some((lead, tail)) = text.split_once(SUFFIX_MARK)
        && !lead.is_empty()
    {
        let bad = || {
            format!(
                "{NOT_AN_ID}; around `..`, first and last hex digits of one id, as `4..00000239`"
            )
        };
        let Ok(IdArg::Prefix(prefix)) = parse_prefix(lead) else {
            return Err(bad());
        };
        return match parse_id_arg(&format!("{SUFFIX_MARK}{tail}")) {
            Ok(IdArg::Suffix(digits)) if prefix.digits.len() + digits.len() <= 32 => {
                Ok(IdArg::Both(prefix, digits))
            }
            Ok(_) => Err(bad()),
            Err(why) => Err(why),
        };
    }
    let (suffix, text) = match text.strip_prefix(SUFFIX_MARK) {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let digits = hex_digits(text);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) || digits.len() > 32 {
        return Err(NOT_AN_ID.into());
    }
    let range = |fill: char| {
        let mut whole = digits.clone();
        whole.extend(std::iter::repeat_n(fill, 32 - digits.len()));
        Uuid::parse_str(&whole).expect("32 hex digits")
    };
    if digits.len() == 32 {
        return Ok(IdArg::Whole(range('0')));
    }
    if digits.len() < MIN_PREFIX_DIGITS {
        return Err(format!(
            "too short to name an id: give at least {MIN_PREFIX_DIGITS} hex digits"
        ));
    }
    if suffix {
        return Ok(IdArg::Suffix(digits));
    }
    Ok(IdArg::Prefix(IdPrefix::of(digits)))
}

/// The first digits before the mark of a both-ends form: any number of them (the last digits
/// carry the length).
fn parse_prefix(text: &str) -> Result<IdArg, String> {
    let digits = hex_digits(text);
    if digits.is_empty() || digits.len() >= 32 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(NOT_AN_ID.into());
    }
    Ok(IdArg::Prefix(IdPrefix::of(digits)))
}

impl IdPrefix {
    /// The ids starting with `digits` (fewer than 32 hex digits, lower case).
    fn of(digits: String) -> Self {
        let range = |fill: char| {
            let mut whole = digits.clone();
            whole.extend(std::iter::repeat_n(fill, 32 - digits.len()));
            Uuid::parse_str(&whole).expect("32 hex digits")
        };
        Self {
            first: range('0'),
            last: range('f'),
            digits,
        }
    }
}

/// Whether `typed` is `expected` as an operator would type it: around spaces, case, hyphens
/// and the suffix mark aside (a count or an id, shown or whole).
pub(crate) fn same_id_form(typed: &str, expected: &str) -> bool {
    let bare = |text: &str| {
        let text = text.trim();
        hex_digits(text.strip_prefix(SUFFIX_MARK).unwrap_or(text))
    };
    bare(typed) == bare(expected)
}

/// `text` without hyphens and in lower case: how ids are compared as typed.
fn hex_digits(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

mod names;

pub use names::{IdNames, ShownId};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_ids_and_prefixes_are_read_with_or_without_hyphens() {
        let id = Uuid::parse_str("01a22fde-e61e-75b2-8859-c2ce809dce28").expect("uuid");
        assert_eq!(parse_id_arg(&id.to_string()), Ok(IdArg::Whole(id)));
        assert_eq!(
            parse_id_arg("01A22FDE-E61E-75B2-8859-C2CE809DCE28"),
            Ok(IdArg::Whole(id))
        );
        let IdArg::Prefix(prefix) = parse_id_arg("01a22fde-e6").expect("a prefix") else {
            panic!("a prefix")
        };
        assert_eq!(prefix.digits, "01a22fdee6");
        assert_eq!(
            prefix.first.to_string(),
            "01a22fde-e600-0000-0000-000000000000"
        );
        assert_eq!(
            prefix.last.to_string(),
            "01a22fde-e6ff-ffff-ffff-ffffffffffff"
        );
        assert!(prefix.first <= id || !id.to_string().starts_with("01a22fde-e6"));
        assert_eq!(
            parse_id_arg("..C2CE809DCE28"),
            Ok(IdArg::Suffix("c2ce809dce28".into()))
        );
        assert!(parse_id_arg("..c2c").is_err(), "too short a suffix");
        let IdArg::Both(lead, tail) = parse_id_arg("4..00000239").expect("both ends") else {
            panic!("both ends")
        };
        assert_eq!((lead.digits.as_str(), tail.as_str()), ("4", "00000239"));
        assert!(parse_id_arg("4..023").is_err(), "too short an end");
        assert!(parse_id_arg("x..00000239").is_err());
        let too_long = format!("4..{}", "0".repeat(32));
        assert!(
            parse_id_arg(&too_long).is_err(),
            "more digits than an id has"
        );
        assert!(
            parse_id_arg("4..0000023x")
                .expect_err("not hex")
                .contains("not a UUID"),
            "a sentence that says what an id may be"
        );
        assert!(parse_id_arg("01a").is_err(), "too short");
        assert!(parse_id_arg("not-hex").is_err());
        assert!(parse_id_arg("").is_err());
    }
}
