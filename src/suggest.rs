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

/// Edit distance over chars, an adjacent transposition counting as one
/// edit (optimal string alignment): `stirp` is one typo from `strip`, as
/// `denny` is from `deny`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: the one before the previous is what a transposition reads.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j - 1] + cost)
                .min(previous[j] + 1)
                .min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut row);
    }
    previous[b.len()]
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
        assert_eq!(edit_distance("stirp", "strip"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("stirp", ["strip", "deny"]), Some("strip"));
    }
}
