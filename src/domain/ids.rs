//! Ids as operators type them: a whole UUID, or the first hex digits of one (hyphens
//! ignored), resolved to the one id they name — the way git takes abbreviated hashes.

use uuid::Uuid;

/// The fewest digits a prefix may have: shorter ones name too many ids to be useful.
pub const MIN_PREFIX_DIGITS: usize = 4;

/// An id argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdArg {
    Whole(Uuid),
    Prefix(IdPrefix),
}

/// The first hex digits of an id, and the range of ids that start with them (so that they are
/// found through the primary key, not by a scan).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdPrefix {
    pub digits: String,
    pub first: Uuid,
    pub last: Uuid,
}

/// Reads an id argument; `Err` says why it is not one.
pub fn parse_id_arg(text: &str) -> Result<IdArg, String> {
    let digits: String = text
        .trim()
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) || digits.len() > 32 {
        return Err("not a UUID or the first hex digits of one".into());
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
    Ok(IdArg::Prefix(IdPrefix {
        first: range('0'),
        last: range('f'),
        digits,
    }))
}

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
        assert!(parse_id_arg("01a").is_err(), "too short");
        assert!(parse_id_arg("not-hex").is_err());
        assert!(parse_id_arg("").is_err());
    }
}
