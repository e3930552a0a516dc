//! Whether a tenant scope names anything: a scope that matches nothing is said out loud — a
//! tenant that exists but has no bootstraps is told apart from a probable typo, with the
//! tenant names it may have meant — never shown as an empty, all-clear board.

use super::text;

/// What a tenant scope matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScopeMatch {
    /// The tenant has bootstraps.
    Bootstraps,
    /// The tenant has knowledge spaces but no bootstrap: nothing of it to migrate.
    NoBootstraps,
    /// No tenant of this name has bootstraps, nor — when `spaces_known` (the platform's
    /// `knowledge_spaces` could be read) — knowledge spaces; `near` are the names it may have
    /// meant.
    NoSuchTenant {
        near: Vec<String>,
        spaces_known: bool,
    },
}

impl ScopeMatch {
    /// The sentence for a scope that matches nothing; `None` when it matches bootstraps.
    pub(crate) fn sentence(&self, tenant: &str) -> Option<String> {
        let tenant = text::clean(tenant, 64);
        match self {
            Self::Bootstraps => None,
            Self::NoBootstraps => Some(format!(
                "tenant {tenant} has knowledge spaces but no bootstraps: nothing of it to migrate"
            )),
            Self::NoSuchTenant { near, spaces_known } => {
                let has = if *spaces_known {
                    "has bootstraps or knowledge spaces"
                } else {
                    "has bootstraps (knowledge_spaces could not be read to say more)"
                };
                Some(if near.is_empty() {
                    format!("no tenant {tenant} {has}; a typo?")
                } else {
                    let near: Vec<String> = near.iter().map(|n| text::clean(n, 64)).collect();
                    format!(
                        "no tenant {tenant} {has}; did you mean {}?",
                        near.join(" or ")
                    )
                })
            }
        }
    }
}

/// Up to three of `known` that `typed` may have meant: the same name in another case, names
/// that start with it, then names within two edits, closest first.
pub(crate) fn near_names(typed: &str, known: &[String]) -> Vec<String> {
    let typed_lower = typed.to_lowercase();
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let score = if lower == typed_lower {
                0
            } else if lower.starts_with(&typed_lower) || typed_lower.starts_with(&lower) {
                1
            } else {
                match edit_distance(&lower, &typed_lower) {
                    d @ 1..=2 => 1 + d,
                    _ => return None,
                }
            };
            Some((score, name))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

/// Levenshtein distance, by characters (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_typo_suggests_the_names_it_may_have_meant() {
        let known = names(&["acme", "acme-eu", "globex", "initech", "umbrella"]);
        assert_eq!(near_names("Acme", &known), names(&["acme", "acme-eu"]));
        assert_eq!(near_names("globx", &known), names(&["globex"]));
        assert_eq!(near_names("zzz", &known), Vec::<String>::new());
    }

    #[test]
    fn the_sentences_tell_a_typo_from_an_empty_tenant() {
        let typo = ScopeMatch::NoSuchTenant {
            near: names(&["acme"]),
            spaces_known: true,
        };
        assert_eq!(
            typo.sentence("Acme").expect("a sentence"),
            "no tenant Acme has bootstraps or knowledge spaces; did you mean acme?"
        );
        assert!(
            ScopeMatch::NoBootstraps
                .sentence("acme")
                .expect("a sentence")
                .contains("nothing of it to migrate")
        );
        assert_eq!(ScopeMatch::Bootstraps.sentence("acme"), None);
        // Without the platform's spaces table it says only what it knows.
        let unsure = ScopeMatch::NoSuchTenant {
            near: Vec::new(),
            spaces_known: false,
        };
        assert_eq!(
            unsure.sentence("newco").expect("a sentence"),
            "no tenant newco has bootstraps (knowledge_spaces could not be read to say more); \
             a typo?"
        );
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("acme", "acme"), 0);
        assert_eq!(edit_distance("acme", "acne"), 1);
        assert_eq!(
            edit_distance("größe", "grösse"),
            2,
            "by characters, not bytes"
        );
    }
}
