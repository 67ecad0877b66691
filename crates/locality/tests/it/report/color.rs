//! Colour on the terminal: `--color always` colours verdicts and severities, `never` and a
//! non-terminal stdout (`auto`, as every test's) do not, and `NO_COLOR` does not override
//! an explicit `--color always`.

use assert_cmd::Command;

const ESC: &str = "\u{1b}[";

fn out(args: &[&str], no_color: Option<&str>) -> String {
    let mut c = Command::cargo_bin("locality").unwrap();
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
        .env_remove("NO_COLOR")
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .args(args)
        .arg("-q");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let audit = ["audit", "-f", "telemetry-30-nodes.json"];
    let summary = ["matrix", "-f", "three-zones.json", "-o", "summary"];
    for args in [&audit[..], &summary[..]] {
        let mut always = args.to_vec();
        always.extend_from_slice(&["--color", "always"]);
        let coloured = out(&always, None);
        assert!(coloured.contains(ESC), "{args:?} --color always:\n{coloured}");
        assert!(
            out(&always, Some("1")).contains(ESC),
            "the flag wins over NO_COLOR"
        );
        let mut never = args.to_vec();
        never.extend_from_slice(&["--color", "never"]);
        assert!(!out(&never, None).contains(ESC));
        // auto: stdout is a pipe here.
        assert!(!out(args, None).contains(ESC), "{args:?}: colour into a pipe");
        // Without escapes, the text is the same.
        let plain = out(&never, None);
        let stripped = strip(&coloured);
        assert_eq!(stripped, plain);
    }
    // Colour never reaches machine-readable formats.
    let json = out(
        &[
            "audit",
            "-f",
            "three-zones.json",
            "-o",
            "json",
            "--color",
            "always",
        ],
        None,
    );
    assert!(!json.contains(ESC));
}

/// Removes ANSI SGR sequences (`ESC [ … m`).
fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(ESC) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match rest.find('m') {
            Some(j) => rest = &rest[j + 1..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}
