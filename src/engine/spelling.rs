//! The names nearest a misspelt one, for errors that say "did you mean": option keys, model
//! names.

/// The edit distance between `a` and `b`, in characters, counting an insertion, a deletion, a
/// substitution or a swap of two neighbours as one edit (optimal string alignment), so that the
/// common typo of two letters swapped (`form` for `from`) is as near as one letter wrong.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back, one back, and the one being filled.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let substitution = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            row[j] = substitution.min(previous[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut previous, row);
    }
    previous[b.len()]
}

/// Up to `limit` of `names` near enough to `wanted` to be a typo of it (compared without case:
/// at most a third of a name's characters differ), nearest first.
pub fn nearest<'n>(
    wanted: &str,
    names: impl IntoIterator<Item = &'n str>,
    limit: usize,
) -> Vec<&'n str> {
    let wanted = wanted.to_lowercase();
    let mut near: Vec<(usize, &str)> = names
        .into_iter()
        .map(|name| (edit_distance(&wanted, &name.to_lowercase()), name))
        .filter(|&(distance, name)| is_typo(distance, name))
        .collect();
    near.sort_unstable();
    near.dedup();
    near.into_iter().take(limit).map(|(_, name)| name).collect()
}

/// Whether `distance` edits from `name` is close enough to be a typo of it: at most a third of
/// its characters (of three, for the shortest names).
pub fn is_typo(distance: usize, name: &str) -> bool {
    distance * 3 <= name.chars().count().max(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("thread", "threads"), 1);
        assert_eq!(edit_distance("threds", "threads"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("policy", "policy"), 0);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("form", "from"), 1);
        assert_eq!(edit_distance("modle", "model"), 1);
    }

    #[test]
    fn nearest_keeps_the_typos_nearest_first() {
        let names = ["gpt-4o", "gpt-4", "gpt-4o-mini", "o1", "davinci"];
        assert_eq!(nearest("gpt4o", names, 3), ["gpt-4o"]);
        assert_eq!(nearest("gpt-4", names, 3), ["gpt-4", "gpt-4o"]);
        assert_eq!(nearest("GPT-4o", names, 1), ["gpt-4o"]);
        assert!(nearest("claude-3-opus", names, 3).is_empty());
    }
}
