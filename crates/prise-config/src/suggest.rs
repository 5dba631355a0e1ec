//! "Did you mean": the known name closest to one a person typed.

/// The name in `names` closest to `wanted`, if one is close enough to be a typo of it
/// (not another word).
pub fn closest<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|name| (distance(name, wanted), name))
        .filter(|(d, name)| *d <= 2.max(name.len() / 4))
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance, in characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn typos_not_other_words() {
        let keys = ["command", "args", "env", "disabled"];
        assert_eq!(closest("commmand", keys), Some("command"));
        assert_eq!(closest("disable", keys), Some("disabled"));
        assert_eq!(closest("timeout", keys), None);
    }
}
