//! Text that thousands of rows share — tenant names, worker ids, error codes — stored once.

use std::collections::HashSet;
use std::sync::Arc;

use crate::domain::board::Name;

/// An interner: every distinct string is allocated once and shared by `Arc`.
#[derive(Debug, Default)]
pub(crate) struct Names {
    names: HashSet<Name>,
    /// The size after the last sweep; the next sweep happens when the set has doubled.
    swept_at: usize,
}

impl Names {
    pub(crate) fn get(&mut self, text: &str) -> Name {
        if let Some(name) = self.names.get(text) {
            return name.clone();
        }
        let name: Name = Arc::from(text);
        self.names.insert(name.clone());
        if self.names.len() > (2 * self.swept_at).max(1024) {
            self.sweep();
        }
        name
    }

    /// Forgets names no row uses any more (worker ids come and go over a long rollout).
    fn sweep(&mut self) {
        self.names.retain(|name| Arc::strong_count(name) > 1);
        self.swept_at = self.names.len();
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.names.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_text_is_stored_once_and_unused_text_is_forgotten() {
        let mut names = Names::default();
        let a = names.get("acme");
        let b = names.get("acme");
        assert!(Arc::ptr_eq(&a, &b));
        for n in 0..5_000 {
            names.get(&format!("worker-{n}"));
        }
        assert!(
            names.len() < 5_000,
            "unused names were swept: {}",
            names.len()
        );
        assert!(Arc::ptr_eq(&a, &names.get("acme")), "used names stay");
    }
}
