//! [`Labels`]: the string map of labels, annotations and selectors.

use std::fmt;

/// A `map[string]string` as the API holds labels, annotations and selectors: keys unique and
/// sorted (iteration is deterministic, as the model promises), kept in one vector.
///
/// An object carries a handful of labels at most; a vector costs one allocation of exactly
/// that many entries, where a B-tree map allocates a node of eleven. Lookups are binary
/// searches. The methods mirror `BTreeMap`'s.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Labels(Vec<(String, String)>);

impl Labels {
    /// An empty map.
    pub const fn new() -> Self {
        Labels(Vec::new())
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&String> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; the value it replaced.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// Removes `key`; its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Keeps the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut String) -> bool) {
        self.0.retain_mut(|(k, v)| keep(k, v));
    }

    /// The entries, by key.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    /// The keys, sorted.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    /// The values, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Iterator over a [`Labels`]' entries, by key.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (String, String)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a String, &'a String);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::ops::Index<&str> for Labels {
    type Output = String;
    /// As `BTreeMap`'s: panics when `key` is not set.
    fn index(&self, key: &str) -> &String {
        self.get(key).expect("no entry found for key")
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Extend<(String, String)> for Labels {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl FromIterator<(String, String)> for Labels {
    /// As `BTreeMap`: a key given twice keeps its last value.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        let mut v: Vec<(String, String)> = iter.into_iter().collect();
        // Stable: among equal keys the last given stays last, then wins the dedup below.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(String, String)> = Vec::with_capacity(v.len());
        for (k, val) in v {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = val,
                _ => out.push((k, val)),
            }
        }
        Labels(out)
    }
}

impl<const N: usize> From<[(String, String); N]> for Labels {
    fn from(entries: [(String, String); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl IntoIterator for Labels {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a String, &'a String);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl serde::Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Labels {
    /// A JSON/YAML mapping of strings; a repeated key keeps its last value (as Go's decoder).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Labels;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of strings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Labels, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(entry) = map.next_entry::<String, String>()? {
                    v.push(entry);
                }
                Ok(v.into_iter().collect())
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        x.to_string()
    }

    #[test]
    fn behaves_as_a_sorted_map() {
        let mut l: Labels = [(s("b"), s("1")), (s("a"), s("2")), (s("b"), s("3"))].into();
        assert_eq!(l.len(), 2);
        assert_eq!(l.get("b"), Some(&s("3")), "the last value given wins");
        assert_eq!(l.keys().collect::<Vec<_>>(), [&s("a"), &s("b")]);
        assert_eq!(l.insert(s("c"), s("4")), None);
        assert_eq!(l.insert(s("a"), s("5")), Some(s("2")));
        assert_eq!(l.remove("b"), Some(s("3")));
        assert!(!l.contains_key("b"));
        assert_eq!(
            l.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
            ["a=5", "c=4"]
        );
        l.retain(|k, _| k != "a");
        assert_eq!(format!("{l:?}"), r#"{"c": "4"}"#);
    }

    #[test]
    fn reads_and_writes_as_a_json_object() {
        let l: Labels = serde_json::from_str(r#"{"b": "1", "a": "2", "b": "3"}"#).unwrap();
        assert_eq!(serde_json::to_string(&l).unwrap(), r#"{"a":"2","b":"3"}"#);
    }
}
