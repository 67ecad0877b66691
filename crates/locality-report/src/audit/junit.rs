//! `audit -o junit`: JUnit XML for CI systems that show test reports (GitLab, Jenkins, the
//! GitHub test-report actions). One test suite, `locality audit`; one test case per
//! (rule, Service, port): a finding at or above the threshold is a failure, one below it a
//! success with its message as system-out, a suppressed finding is skipped with what
//! suppressed it and why; a Service without a finding is one passing test case, so a clean
//! audit still lists what it checked.

use std::collections::BTreeSet;
use std::io::{self, Write};

use locality_audit::{AuditReport, Finding, Severity};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::{port_family_text, service_text, totals_text};

fn case_name(f: &Finding) -> String {
    let target = port_family_text(f);
    if target.is_empty() {
        format!("{} {}", f.rule.as_str(), service_text(f))
    } else {
        format!("{} {} {target}", f.rule.as_str(), service_text(f))
    }
}

/// Writes the report as JUnit XML; findings at or above `fail_on` (every finding when
/// `None`) are failures.
pub fn write_junit(
    report: &AuditReport,
    header: &crate::header::ReportHeader,
    fail_on: Option<Severity>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut junit = Report::new("locality audit");
    let mut suite = TestSuite::new("locality audit");
    for (name, value) in crate::header::junit_properties(header) {
        suite.add_property(Property::new(name, value));
    }
    suite.add_property(Property::new("summary", totals_text(report)));
    suite.add_property(Property::new(
        "input",
        format!("{:?}", report.input).to_lowercase(),
    ));
    suite.add_property(Property::new(
        "kubernetesVersion",
        report.kubernetes_version.clone(),
    ));
    suite.add_property(Property::new(
        "kubeProxyVersion",
        report.kube_proxy_version.clone(),
    ));
    for f in &report.findings {
        let status = match &f.suppression {
            Some(s) => {
                let mut st = TestCaseStatus::skipped();
                st.set_message(format!(
                    "suppressed by {}: {}",
                    s.source,
                    s.justification.as_deref().unwrap_or("no reason given")
                ));
                st
            }
            None if fail_on.is_none_or(|t| f.severity.at_least(t)) => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(format!(
                    "{} {}: {}",
                    f.severity.as_str(),
                    f.rule.as_str(),
                    f.title
                ));
                st.set_description(format!("{}\nFix: {}\n{}", f.message, f.fix, f.docs_url));
                st
            }
            None => TestCaseStatus::success(),
        };
        let mut tc = TestCase::new(case_name(f), status);
        tc.set_classname(format!("locality.audit.{}", f.rule.as_str()));
        if f.suppression.is_none() && !fail_on.is_none_or(|t| f.severity.at_least(t)) {
            tc.set_system_out(format!("{}: {}", f.severity.as_str(), f.message));
        }
        suite.add_test_case(tc);
    }
    let with_findings: BTreeSet<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.service.namespace.as_str(), f.service.name.as_str()))
        .collect();
    let clean: BTreeSet<(&str, &str)> = report
        .services
        .iter()
        .map(|s| (s.service.namespace.as_str(), s.service.name.as_str()))
        .filter(|k| !with_findings.contains(k))
        .collect();
    for (ns, name) in clean {
        let mut tc = TestCase::new(format!("{ns}/{name}"), TestCaseStatus::success());
        tc.set_classname("locality.audit");
        suite.add_test_case(tc);
    }
    junit.add_test_suite(suite);
    let text = crate::encode::xml_document(junit.to_string().map_err(io::Error::other)?);
    out.write_all(text.as_bytes())
}
