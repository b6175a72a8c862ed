//! "Did you mean": the nearest of a set of words, for messages. Used by
//! the checker, the policy linter and the importers' messages alike, so
//! none of them reaches into another for it.

use crate::model::Role;

/// The candidate closest to `word`, if it is close enough to be a likely
/// misspelling: case-insensitive equality, or an edit distance of at most a
/// third of the word's length (at least 1).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = if candidate.to_lowercase() == lower {
            0
        } else {
            edit_distance(&lower, &candidate.to_lowercase())
        };
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    let allowed = (word.chars().count() / 3).max(1);
    best.filter(|&(d, c)| d <= allowed && c != word)
        .map(|(_, c)| c)
}

/// ` (did you mean `Text`?)` when `word` is close to a role (or is an
/// Apple role with a counterpart), else empty.
pub fn role(word: &str) -> String {
    let near = Role::from_apple(word)
        .map(Role::as_str)
        .or_else(|| closest(word, Role::ALL.iter().map(|r| r.as_str())));
    match near {
        Some(role) => format!(" (did you mean `{role}`?)"),
        None => String::new(),
    }
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == cb {
                previous
            } else {
                1 + previous.min(row[j]).min(row[j + 1])
            };
            previous = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_words_only() {
        let roles = ["Text", "Group", "Heading", "Document"];
        assert_eq!(closest("text", roles), Some("Text"));
        assert_eq!(closest("Headng", roles), Some("Heading"));
        assert_eq!(closest("Toolbar", roles), None);
        assert_eq!(closest("Text", roles), None);
        assert_eq!(edit_distance("subrol", "subrole"), 1);
    }
}
