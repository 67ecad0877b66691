//! `metadata`: name, namespace, labels, kept annotations, owner references.

#[allow(unused_imports)]
use super::*;

/// `metadata` (name is checked by the caller, which knows whether the object needs one).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MetaW {
    #[serde(default, deserialize_with = "object_name")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "namespace_name")]
    pub(super) namespace: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) uid: String,
    #[serde(default, deserialize_with = "labels")]
    pub(super) labels: m::Labels,
    #[serde(default, deserialize_with = "kept_annotations")]
    pub(super) annotations: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) owner_references: Vec<M<OwnerRefW>>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) creation_timestamp: Option<String>,
    #[serde(default, deserialize_with = "opt_nonempty")]
    pub(super) deletion_timestamp: Option<String>,
}

/// The `metadata` of an object only counted ([`crate::Pods::Count`]): its name, checked as
/// [`MetaW`]'s is; the rest is skipped unread.
#[derive(Deserialize, Default)]
pub(crate) struct CountedMetaW {
    #[serde(default, deserialize_with = "object_name")]
    pub name: Option<String>,
}

/// `metadata.name`: as [`opt_nonempty`], refused when no kind's name could be it
/// (`crate::names::any_name`; the kind's own rule is checked once the kind is known).
fn object_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let name = opt_nonempty(d)?;
    if let Some(n) = &name {
        crate::names::any_name(n).map_err(de::Error::custom)?;
    }
    Ok(name)
}

/// `metadata.namespace`: a DNS-1123 label when given (`ValidateObjectMeta` checks it with
/// `ValidateNamespaceName` for every namespaced kind).
fn namespace_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let ns: String = nullable(d)?;
    if !ns.is_empty() {
        crate::names::dns1123_label(&ns).map_err(de::Error::custom)?;
    }
    Ok(ns)
}

impl MetaW {
    /// Namespace (may be empty).
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    pub(crate) fn into_model(self, origin: m::Origin) -> m::ObjectMeta {
        m::ObjectMeta {
            name: self.name.unwrap_or_default(),
            namespace: self.namespace,
            uid: self.uid,
            labels: self.labels,
            annotations: self.annotations,
            owner_references: self
                .owner_references
                .into_iter()
                .map(|x| x.0.into_model())
                .collect(),
            creation_timestamp: self.creation_timestamp,
            deletion_timestamp: self.deletion_timestamp,
            origin,
            defaulted: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OwnerRefW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) uid: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) controller: bool,
}

impl OwnerRefW {
    fn into_model(self) -> m::OwnerReference {
        m::OwnerReference {
            kind: self.kind,
            name: self.name,
            uid: self.uid,
            controller: self.controller,
        }
    }
}
