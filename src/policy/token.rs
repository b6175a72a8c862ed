//! A small Rego tokenizer: enough for the load-time recursion check and
//! for the authoring tools (lint, metadata), never for evaluation.

/// A token of Rego source with its 1-based line and column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub text: String,
    pub line: usize,
    pub col: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Ident,
    /// A string literal; `text` is its value (escapes left as written).
    Str,
    Number,
    Punct,
}

/// Tokenizes Rego well enough for the linter: identifiers, strings (both
/// kinds), numbers, and punctuation (`==`, `!=`, `:=`, `<=`, `>=` as one);
/// comments and whitespace are dropped. Columns count characters.
pub(crate) fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let advance = |i: &mut usize, line: &mut usize, col: &mut usize, c: char| {
        *i += 1;
        if c == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let (start_line, start_col) = (line, col);
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col, c);
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                {
                    let ch = chars[i];
                    advance(&mut i, &mut line, &mut col, ch);
                }
            }
        } else if c == '"' || c == '`' {
            let mut text = String::new();
            advance(&mut i, &mut line, &mut col, c);
            while i < chars.len() && chars[i] != c {
                if c == '"' && chars[i] == '\\' && i + 1 < chars.len() {
                    text.push(chars[i]);
                    advance(&mut i, &mut line, &mut col, '\\');
                }
                text.push(chars[i]);
                {
                    let ch = chars[i];
                    advance(&mut i, &mut line, &mut col, ch);
                }
            }
            if i < chars.len() {
                advance(&mut i, &mut line, &mut col, c);
            }
            tokens.push(Token {
                kind: TokenKind::Str,
                text,
                line: start_line,
                col: start_col,
            });
        } else if c.is_alphabetic() || c == '_' {
            let mut text = String::new();
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                text.push(chars[i]);
                {
                    let ch = chars[i];
                    advance(&mut i, &mut line, &mut col, ch);
                }
            }
            tokens.push(Token {
                kind: TokenKind::Ident,
                text,
                line: start_line,
                col: start_col,
            });
        } else if c.is_ascii_digit() {
            let mut text = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                text.push(chars[i]);
                {
                    let ch = chars[i];
                    advance(&mut i, &mut line, &mut col, ch);
                }
            }
            tokens.push(Token {
                kind: TokenKind::Number,
                text,
                line: start_line,
                col: start_col,
            });
        } else {
            let next = chars.get(i + 1).copied();
            let two = matches!(
                (c, next),
                ('=', Some('='))
                    | ('!', Some('='))
                    | (':', Some('='))
                    | ('<', Some('='))
                    | ('>', Some('='))
            );
            let mut text = String::from(c);
            advance(&mut i, &mut line, &mut col, c);
            if two {
                text.push(next.expect("checked"));
                advance(&mut i, &mut line, &mut col, next.expect("checked"));
            }
            tokens.push(Token {
                kind: TokenKind::Punct,
                text,
                line: start_line,
                col: start_col,
            });
        }
    }
    tokens
}

/// The index of the `]` matching the `[` at `open`, if it is closed.
pub(crate) fn matching_bracket(tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "[" if t.kind == TokenKind::Punct => depth += 1,
            "]" if t.kind == TokenKind::Punct => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index after the `]` matching the `[` at `open`, or the end.
pub(crate) fn skip_brackets(tokens: &[Token], open: usize) -> usize {
    matching_bracket(tokens, open).map_or(tokens.len(), |close| close + 1)
}

/// The string literals compared (`==`, `!=`, `in {…}`) with a reference
/// that ends in `suffix` (`["role"]`, `["attributes", "x"]`), whatever
/// comes before it (`a.role == "Row"`, `"Row" == input.inside[0].role`):
/// the one scan of such comparisons, for the linter's role check and the
/// probes' mentions.
pub(crate) fn compared_literals<'t>(tokens: &'t [Token], suffix: &[&str]) -> Vec<&'t Token> {
    let ends_at = |k: usize| {
        // tokens[k] is the last ident of the suffix, joined by dots.
        let mut at = k;
        for (n, part) in suffix.iter().rev().enumerate() {
            if n > 0 {
                if at < 2 || tokens[at - 1].text != "." {
                    return false;
                }
                at -= 2;
            }
            if tokens[at].kind != TokenKind::Ident || tokens[at].text != *part {
                return false;
            }
        }
        at > 0 && tokens[at - 1].text == "."
    };
    let mut out = Vec::new();
    for k in 0..tokens.len() {
        let t = &tokens[k];
        if t.kind == TokenKind::Punct && (t.text == "==" || t.text == "!=") {
            if k > 0 && ends_at(k - 1) {
                if let Some(lit) = tokens.get(k + 1).filter(|t| t.kind == TokenKind::Str) {
                    out.push(lit);
                }
            }
            if k > 0 && tokens[k - 1].kind == TokenKind::Str {
                // `"Lit" == a.b.c`: the reference after runs while `.ident` follows.
                let mut m = k + 1;
                loop {
                    if m + 2 < tokens.len()
                        && tokens[m + 1].text == "."
                        && tokens[m + 2].kind == TokenKind::Ident
                    {
                        m += 2;
                    } else if m + 1 < tokens.len() && tokens[m + 1].text == "[" {
                        // `input.inside[0].subrole`: past the index.
                        let Some(close) = matching_bracket(tokens, m + 1) else {
                            break;
                        };
                        m = close;
                    } else {
                        break;
                    }
                }
                if m < tokens.len() && ends_at(m) {
                    out.push(&tokens[k - 1]);
                }
            }
        }
        if t.kind == TokenKind::Ident && t.text == "in" && k > 0 && ends_at(k - 1) {
            if let Some(open) = tokens.get(k + 1).filter(|t| t.text == "{" || t.text == "[") {
                let close = if open.text == "{" { "}" } else { "]" };
                for lit in tokens[k + 2..].iter().take_while(|t| t.text != close) {
                    if lit.kind == TokenKind::Str {
                        out.push(lit);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literals(source: &str, suffix: &[&str]) -> Vec<(String, usize)> {
        compared_literals(&tokenize(source), suffix)
            .into_iter()
            .map(|t| (t.text.clone(), t.col))
            .collect()
    }

    /// Both sides of `==` and `!=`, `in` sets and arrays, through indexes;
    /// a reference that goes on past the suffix (`a.role.x`) is not one.
    #[test]
    fn compared_literals_are_found_on_either_side() {
        assert_eq!(
            literals(
                r#"a.role == "Row"; "Cell" != input.inside[0].role"#,
                &["role"]
            ),
            [("Row".to_string(), 11), ("Cell".to_string(), 18)]
        );
        assert_eq!(
            literals(r#"x.role in {"A", "B"}; x.role in ["C"]"#, &["role"]),
            [
                ("A".to_string(), 12),
                ("B".to_string(), 17),
                ("C".to_string(), 34)
            ]
        );
        assert_eq!(
            literals(
                r#""private" == input.element.attributes.privacy"#,
                &["attributes", "privacy"]
            ),
            [("private".to_string(), 1)]
        );
        assert!(literals(r#""Row" == a.role.x; a.subrole == "Row""#, &["role"]).is_empty());
        assert!(literals(r#""Row" == role"#, &["role"]).is_empty());
    }
}
