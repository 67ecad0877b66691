//! "Did you mean …?" for unknown names.

/// A suffix suggesting up to three known names close to `wanted` (empty when none is close).
pub fn did_you_mean<'a>(wanted: &str, known: impl Iterator<Item = &'a str>) -> String {
    let mut scored: Vec<(f64, &str)> = known
        .map(|k| (strsim::jaro_winkler(wanted, k), k))
        .filter(|(score, _)| *score > 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    let names: Vec<&str> = scored.iter().take(3).map(|(_, k)| *k).collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", names.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_close_names_only() {
        let known = ["node-a", "node-b", "gateway"];
        assert!(did_you_mean("node-x", known.iter().copied()).contains("node-a"));
        assert_eq!(did_you_mean("zzzzzz", known.iter().copied()), "");
    }
}
