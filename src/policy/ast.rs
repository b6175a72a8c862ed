//! One walk of regorus's parsed expressions, for the analyses that read a
//! policy's AST (`policy::compose`, `policy::tools::space`): each handles
//! the expressions it must, and reaches the rest through [`parts`].

use regorus::unstable::{Expr, Query};

/// A part of an expression: a sub-expression, or a comprehension's query.
pub(crate) enum Part<'a> {
    Expr(&'a Expr),
    Query(&'a Query),
}

/// The parts of `expr` in the order Rego evaluates them (a comprehension's
/// query before its term, a call's function before its arguments); `None`
/// for a kind of expression this code does not know, which a caller must
/// read as reading anything.
pub(crate) fn parts(expr: &Expr) -> Option<Vec<Part<'_>>> {
    fn e(x: &Expr) -> Part<'_> {
        Part::Expr(x)
    }
    Some(match expr {
        Expr::String { .. }
        | Expr::RawString { .. }
        | Expr::Number { .. }
        | Expr::Bool { .. }
        | Expr::Null { .. }
        | Expr::Var { .. } => Vec::new(),
        Expr::Array { items, .. } | Expr::Set { items, .. } => items.iter().map(|i| e(i)).collect(),
        Expr::Object { fields, .. } => fields.iter().flat_map(|(_, k, v)| [e(k), e(v)]).collect(),
        Expr::ArrayCompr { term, query, .. } | Expr::SetCompr { term, query, .. } => {
            vec![Part::Query(query), e(term)]
        }
        Expr::ObjectCompr {
            key, value, query, ..
        } => vec![Part::Query(query), e(key), e(value)],
        Expr::Call { fcn, params, .. } => std::iter::once(e(fcn))
            .chain(params.iter().map(|p| e(p)))
            .collect(),
        Expr::UnaryExpr { expr, .. } => vec![e(expr)],
        Expr::RefDot { refr, .. } => vec![e(refr)],
        Expr::RefBrack { refr, index, .. } => vec![e(refr), e(index)],
        Expr::BinExpr { lhs, rhs, .. }
        | Expr::BoolExpr { lhs, rhs, .. }
        | Expr::ArithExpr { lhs, rhs, .. }
        | Expr::AssignExpr { lhs, rhs, .. } => vec![e(lhs), e(rhs)],
        Expr::Membership {
            key,
            value,
            collection,
            ..
        } => key
            .iter()
            .map(|k| e(k))
            .chain([e(value), e(collection)])
            .collect(),
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

/// The variable a reference starts from (`data` in `data.ctxgate.x`, `a`
/// in the head `a.b[k]`).
pub(crate) fn root(expr: &Expr) -> Option<&str> {
    let mut at = expr;
    loop {
        match at {
            Expr::RefDot { refr, .. } | Expr::RefBrack { refr, .. } => at = refr,
            Expr::Var { value, .. } => return value.as_string().ok().map(|s| &**s),
            _ => return None,
        }
    }
}
