//! Names and label values checked as the API server checks them, so that a file cannot
//! hand the reports a name no cluster would store (control characters, bidi overrides, a
//! line break, a zone that is not a label value). Written after upstream's
//! `staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsDNS1035Label`, `IsValidLabelValue`) and the per-kind name
//! checks of `pkg/apis/core/validation/validation.go` (`ValidateObjectMeta` with
//! `ValidateServiceName` = `NameIsDNS1035Label`, `ValidateNamespaceName` and
//! `ValidateNodeName`/`ValidatePodName` = `NameIsDNSSubdomain`).

/// The longest DNS-1123 label or DNS-1035 label (63).
const LABEL_MAX: usize = 63;
/// The longest DNS-1123 subdomain (253).
const SUBDOMAIN_MAX: usize = 253;

/// A quoted, shortened copy of `value` for a message (its bad characters escaped by the
/// CLI's display path).
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(80).collect();
    if cut.len() < value.len() {
        format!("{cut:?}… ({} bytes)", value.len())
    } else {
        format!("{cut:?}")
    }
}

fn label_chars(s: &str, first: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && first(b[0])
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// `IsDNS1123Label`: at most 63 lower-case alphanumerics or `-`, starting and ending with
/// an alphanumeric (Namespace names, every object's `metadata.namespace`).
pub(crate) fn dns1123_label(s: &str) -> Result<(), String> {
    if s.len() > LABEL_MAX || !label_chars(s, |c| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        return Err(format!(
            "{} is not a valid DNS-1123 label (at most 63 lower-case letters, digits or '-', starting and ending with a letter or digit)",
            shown(s)
        ));
    }
    Ok(())
}

/// `IsDNS1035Label`: as a DNS-1123 label, starting with a letter (Service names).
pub(crate) fn dns1035_label(s: &str) -> Result<(), String> {
    if s.len() > LABEL_MAX || !label_chars(s, |c| c.is_ascii_lowercase()) {
        return Err(format!(
            "{} is not a valid DNS-1035 label (at most 63 lower-case letters, digits or '-', starting with a letter and ending with a letter or digit)",
            shown(s)
        ));
    }
    Ok(())
}

/// `IsDNS1123Subdomain`: at most 253 characters, DNS-1123 labels joined by `.` (Node, Pod,
/// EndpointSlice and workload names, `spec.nodeName`).
pub(crate) fn dns1123_subdomain(s: &str) -> Result<(), String> {
    let ok = s.len() <= SUBDOMAIN_MAX
        && s.split('.')
            .all(|part| label_chars(part, |c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if !ok {
        return Err(format!(
            "{} is not a valid DNS-1123 subdomain (at most 253 lower-case letters, digits, '-' or '.', each part starting and ending with a letter or digit)",
            shown(s)
        ));
    }
    Ok(())
}

/// `IsValidLabelValue`: empty, or at most 63 alphanumerics, `-`, `_` or `.`, starting and
/// ending with an alphanumeric (label values, hence zones: `topology.kubernetes.io/zone`,
/// an EndpointSlice endpoint's `zone` and `hints.forZones[].name`).
pub(crate) fn label_value(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let ok = b.is_empty()
        || (b.len() <= LABEL_MAX
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')));
    if !ok {
        return Err(format!(
            "{} is not a valid label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)",
            shown(s)
        ));
    }
    Ok(())
}

/// What every object's name must be whatever its kind (the kinds locality does not read
/// included, whose names upstream checks only as path segments: `ValidatePathSegmentName`):
/// no `/` or `%`, not `.` or `..`, no control character, at most 253 bytes. The kinds
/// locality reads are checked further by [`for_kind`].
pub(crate) fn any_name(s: &str) -> Result<(), String> {
    if s.len() > SUBDOMAIN_MAX
        || s == "."
        || s == ".."
        || s.contains(['/', '%'])
        || s.chars().any(char::is_control)
    {
        return Err(format!("{} is not a valid object name", shown(s)));
    }
    Ok(())
}

/// The name check of the API server for `kind` (`ValidateObjectMeta`'s name function):
/// Services DNS-1035 labels, Namespaces DNS-1123 labels, the other kinds locality reads
/// DNS-1123 subdomains.
pub(crate) fn for_kind(kind: crate::kind::Kind, name: &str) -> Result<(), String> {
    use crate::kind::Kind;
    match kind {
        Kind::Service => dns1035_label(name),
        Kind::Namespace => dns1123_label(name),
        Kind::List | Kind::Other => Ok(()),
        _ => dns1123_subdomain(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_the_api_server_checks_them() {
        for ok in ["a", "web-1", "a1", &"a".repeat(63)] {
            assert!(dns1123_label(ok).is_ok(), "{ok}");
            assert!(dns1035_label(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "A",
            "-a",
            "a-",
            "a.b",
            "a\u{1b}b",
            "a\nb",
            &"a".repeat(64),
            "a\u{202e}",
        ] {
            assert!(dns1123_label(bad).is_err(), "{bad:?}");
        }
        assert!(dns1035_label("1a").is_err());
        assert!(dns1123_label("1a").is_ok());
        assert!(dns1123_subdomain("node-1.eu-west-1.compute.internal").is_ok());
        for bad in ["a..b", ".a", "a.", "Node", "a_b", &"a".repeat(254)] {
            assert!(dns1123_subdomain(bad).is_err(), "{bad:?}");
        }
        for ok in ["", "eu-west-1a", "Zone_A.1", &"z".repeat(63)] {
            assert!(label_value(ok).is_ok(), "{ok}");
        }
        for bad in ["-a", "a b", "zone\u{1b}[2J", "a\u{200b}", &"z".repeat(64)] {
            assert!(label_value(bad).is_err(), "{bad:?}");
        }
        assert!(any_name("system:controller").is_ok());
        for bad in ["a/b", "a%b", "..", "a\u{7}", "a\u{85}"] {
            assert!(any_name(bad).is_err(), "{bad:?}");
        }
        let long = "x".repeat(1000);
        assert!(dns1123_label(&long).unwrap_err().contains("(1000 bytes)"));
    }
}
