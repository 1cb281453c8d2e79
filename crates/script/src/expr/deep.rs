//! Expression trees of any depth: the standard traits without unbounded recursion,
//! the tree depth, and the stack an evaluation needs.
//!
//! `Drop` walks the tree with a work list; `Clone`, `Debug` and `PartialEq` recurse
//! but continue on a fresh stack segment when the current one runs low ([`grow`]),
//! as the parser does. Evaluation is the hot path and recurses plainly: the thread
//! that evaluates needs [`eval_stack_bytes`] of stack for the tree's depth.

use std::fmt;

use super::Expr;

/// Free stack below which [`grow`] continues on a fresh segment.
const RED_ZONE: usize = 64 * 1024;
/// Size of each stack segment [`grow`] adds.
const STACK_SEGMENT: usize = 1024 * 1024;

/// Stack one tree level of [`Expr::eval`] may use: measured 0.5 KiB in optimized
/// builds and 2.1 KiB in unoptimized ones (x86-64), doubled for a margin.
const EVAL_FRAME_BYTES: usize = if cfg!(debug_assertions) { 4096 } else { 1024 };

/// Run `f`, on a new stack segment if little stack is left (for recursion whose
/// depth follows the input).
pub(super) fn grow<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, f)
}

/// Stack bytes that evaluating an expression of tree depth `depth` (see
/// [`Expr::depth`]) may use, on top of what the caller's own frames need.
pub fn eval_stack_bytes(depth: usize) -> usize {
    depth.saturating_mul(EVAL_FRAME_BYTES)
}

impl Expr {
    /// Number of nodes on the longest path from this node down to a leaf (1 for a
    /// constant or variable); evaluation recurses this deep.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut todo = vec![(self, 1usize)];
        while let Some((e, d)) = todo.pop() {
            max = max.max(d);
            if let Expr::Func { args, .. } = e {
                todo.extend(args.iter().map(|a| (a, d + 1)));
            }
        }
        max
    }
}

fn has_children(e: &Expr) -> bool {
    matches!(e, Expr::Func { args, .. } if !args.is_empty())
}

impl Drop for Expr {
    fn drop(&mut self) {
        let Expr::Func { args, .. } = self else {
            return;
        };
        if !args.iter().any(has_children) {
            // Leaves only: the automatic drop goes one level down.
            return;
        }
        // Detach every node's children before it is dropped, so that no drop recurses.
        let mut todo = std::mem::take(args);
        while let Some(mut e) = todo.pop() {
            if let Expr::Func { args, .. } = &mut e {
                todo.append(args);
            }
        }
    }
}

impl Clone for Expr {
    fn clone(&self) -> Self {
        match self {
            Expr::Const(v) => Expr::Const(*v),
            Expr::Var(r) => Expr::Var(r.clone()),
            Expr::Func { func, args } => Expr::Func {
                func: *func,
                args: grow(|| args.clone()),
            },
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(v) => f.debug_tuple("Const").field(v).finish(),
            Expr::Var(r) => f.debug_tuple("Var").field(r).finish(),
            Expr::Func { func, args } => grow(|| {
                f.debug_struct("Func")
                    .field("func", func)
                    .field("args", args)
                    .finish()
            }),
        }
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Expr::Const(a), Expr::Const(b)) => a == b,
            (Expr::Var(a), Expr::Var(b)) => a == b,
            (Expr::Func { func: f, args: a }, Expr::Func { func: g, args: b }) => {
                f == g && grow(|| a == b)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Func;
    use crate::value::Value;

    /// `0 - (0 - (... 1))`, `n` operators deep, built without recursion.
    fn negations(n: usize) -> Expr {
        let mut e = Expr::Const(Value::Int(1));
        for _ in 0..n {
            e = Expr::Func {
                func: Func::Sub,
                args: vec![Expr::Const(Value::Int(0)), e],
            };
        }
        e
    }

    #[test]
    fn depth_counts_the_longest_path() {
        assert_eq!(Expr::Const(Value::Null).depth(), 1);
        assert_eq!(negations(3).depth(), 4);
        let lopsided = Expr::Func {
            func: Func::Add,
            args: vec![negations(1), negations(5)],
        };
        assert_eq!(lopsided.depth(), 7);
    }

    #[test]
    fn deep_trees_clone_compare_format_and_drop_on_a_small_stack() {
        // Naive recursion over 200000 levels needs tens of MiB of stack.
        let t = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let e = negations(200_000);
                let c = e.clone();
                assert!(e == c);
                assert!(e != negations(199_999));
                let text = format!("{e:?}");
                assert!(text.starts_with("Func { func: Sub, args: [Const(Int(0)), Func {"));
                assert_eq!(text.matches("Func {").count(), 200_000);
                assert_eq!(c.depth(), 200_001);
                drop(c);
                drop(e);
            })
            .expect("spawn");
        t.join().expect("no overflow");
    }
}
