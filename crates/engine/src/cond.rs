//! The `\if` / `\elif` / `\else` / `\endif` stack of one client (psql's and
//! pgbench's `ConditionalStack` semantics).

/// State of one `\if` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfState {
    /// The current branch runs.
    True,
    /// The current branch is skipped; a later `\elif`/`\else` may run.
    False,
    /// A branch already ran (or the whole block is inside a skipped branch): skip to `\endif`.
    Ignored,
    /// In the `\else` branch, which runs.
    ElseTrue,
    /// In the `\else` branch, which is skipped.
    ElseFalse,
}

/// A stack of [`IfState`]s; reused across transactions (no allocation once grown).
#[derive(Debug, Clone, Default)]
pub struct CondStack {
    stack: Vec<IfState>,
}

impl CondStack {
    /// Whether commands currently run (empty stack, or the innermost branch runs).
    #[inline]
    pub fn active(&self) -> bool {
        matches!(
            self.stack.last(),
            None | Some(IfState::True) | Some(IfState::ElseTrue)
        )
    }

    /// The innermost state.
    pub fn peek(&self) -> Option<IfState> {
        self.stack.last().copied()
    }

    /// Enters a block.
    pub fn push(&mut self, s: IfState) {
        self.stack.push(s);
    }

    /// Replaces the innermost state.
    pub fn poke(&mut self, s: IfState) {
        if let Some(top) = self.stack.last_mut() {
            *top = s;
        }
    }

    /// Leaves a block.
    pub fn pop(&mut self) {
        self.stack.pop();
    }

    /// Empties the stack (after an error).
    pub fn reset(&mut self) {
        self.stack.clear();
    }

    /// Whether no block is open.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_follows_top() {
        let mut c = CondStack::default();
        assert!(c.active());
        c.push(IfState::False);
        assert!(!c.active());
        c.poke(IfState::ElseTrue);
        assert!(c.active());
        c.push(IfState::Ignored);
        assert!(!c.active());
        c.pop();
        assert_eq!(c.peek(), Some(IfState::ElseTrue));
        c.reset();
        assert!(c.is_empty());
    }
}
