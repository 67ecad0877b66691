#!/usr/bin/env python3
"""Regenerates `k8s.schema`, the Kubernetes protobuf schema the simulated API server decodes
request bodies and encodes answers with (see `mod.rs` beside this file).

    python3 crates/locality-apiserver/src/protobuf/gen_schema.py

The schema is read from two crates.io packages, fetched with cargo into its usual registry
cache (nothing is built):

* `k8s-pb` (kube-rs, Apache-2.0): prost bindings generated from the upstream
  `k8s.io/api` and `k8s.io/apimachinery` `generated.proto` files. Every field's tag, wire
  type, cardinality and message type, and every kind's `apiVersion`/`kind`, come from its
  `#[prost(...)]` attributes and `impl crate::Resource` blocks.
* `k8s-openapi` (Apache-2.0): the JSON name of each field (its serde `"podIP" =>
  Field::Key_pod_ip` tables). The upstream proto field names are the JSON names
  (go-to-protobuf names each field after its `json` tag), which prost's snake_case loses
  (`podIPs` -> `pod_ips`); k8s-openapi keeps them.

Fields k8s-openapi does not know (types it has no struct for, such as `meta.v1` option
kinds) fall back to the first word of the field's doc comment when that word is the field's
name (upstream comments start with the JSON name), else to lowerCamelCase. The script prints
how many fields each source named.

Output format, one item a line (`#` comments):

    kind <apiVersion> <Kind> <message>       a top-level kind (`*` apiVersion: any)
    message <name>                           starts a message
    <tag> <jsonName> opt|rep <type>          a field; type: string int32 int64 bool bytes
                                             or a message name
    <tag> <jsonName> map <type>              a map<string, type> field
    <tag> - inline <message>                 an embedded message whose fields are the
                                             outer object's in JSON (Go `json:",inline"`)
"""

import json
import os
import re
import subprocess
import sys
import tempfile

K8S_PB = "0.9.0"
K8S_OPENAPI = "0.29.0"
OPENAPI_VERSION = "v1_35"

# The API groups whose kinds get a schema: the kinds the simulated API server stores and the
# built-in kinds kubectl's typed commands (`create <kind>`, `drain`, `create token`) send as
# protobuf from kubectl 1.32 on.
GROUPS = [
    "api/core/v1",
    "api/apps/v1",
    "api/batch/v1",
    "api/policy/v1",
    "api/discovery/v1",
    "api/autoscaling/v1",
    "api/networking/v1",
    "api/rbac/v1",
    "api/scheduling/v1",
    "api/authentication/v1",
]

# Kinds that are not top-level resources in k8s-pb: subresource bodies and option kinds.
# `meta.v1` option kinds are registered in every group version (metav1.AddToGroupVersion).
EXTRA_KINDS = [
    ("*", "DeleteOptions", "apimachinery/pkg/apis/meta/v1", "DeleteOptions"),
    ("policy/v1", "Eviction", "api/policy/v1", "Eviction"),
    ("authentication.k8s.io/v1", "TokenRequest", "api/authentication/v1", "TokenRequest"),
    ("autoscaling/v1", "Scale", "api/autoscaling/v1", "Scale"),
    # Error answers.
    ("*", "Status", "apimachinery/pkg/apis/meta/v1", "Status"),
]

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s.schema")


def sources():
    """The source directories of the two crates (downloaded by `cargo fetch` if needed)."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "Cargo.toml"), "w") as f:
            f.write(
                "[package]\nname = \"k8s-schema-sources\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
                "[lib]\npath = \"lib.rs\"\n[workspace]\n[dependencies]\n"
                f"k8s-pb = \"={K8S_PB}\"\n"
                f"k8s-openapi = {{ version = \"={K8S_OPENAPI}\", default-features = false }}\n"
            )
        open(os.path.join(tmp, "lib.rs"), "w").close()
        manifest = os.path.join(tmp, "Cargo.toml")
        subprocess.run(["cargo", "fetch", "--manifest-path", manifest], check=True)
        meta = json.loads(
            subprocess.run(
                ["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest],
                check=True,
                capture_output=True,
            ).stdout
        )
    dirs = {p["name"]: os.path.dirname(p["manifest_path"]) for p in meta["packages"]}
    return dirs["k8s-pb"], dirs["k8s-openapi"]


def norm(name):
    return name.replace("_", "").lower()


ATTR = re.compile(r"#\[prost\((.*)\)\]")


def parse_pb_module(path, module):
    """Messages {name: [(tag, snake, label, type, doc_first_word)]} and kinds of one mod.rs."""
    text = open(path).read()
    lines = text.split("\n")
    messages = {}
    kinds = []
    i = 0
    current = None
    doc = []
    while i < len(lines):
        line = lines[i]
        m = re.match(r"pub struct (\w+) \{", line)
        if m:
            current = m.group(1)
            messages[current] = []
            doc = []
        elif line == "}":
            current = None
        elif current and line.strip().startswith("///"):
            doc.append(line.strip()[3:].strip())
        elif current and ATTR.search(line):
            attr = ATTR.search(line).group(1)
            # The field declaration may wrap: read up to the closing `,` at depth 0.
            decl = ""
            i += 1
            while True:
                decl += lines[i].strip()
                if decl.endswith(",") and decl.count("<") == decl.count(">"):
                    break
                i += 1
            messages[current].append(field(attr, decl, module, doc))
            doc = []
        m = re.match(r"impl crate::Resource for (\w+) \{", line)
        if m:
            block = "\n".join(lines[i : i + 8])
            api = re.search(r'API_VERSION: &\'static str = "([^"]*)"', block).group(1)
            kind = re.search(r'KIND: &\'static str = "([^"]*)"', block).group(1)
            kinds.append((api, kind, m.group(1)))
        i += 1
    return messages, kinds


def field(attr, decl, module, doc):
    tag = int(re.search(r'tag = "(\d+)"', attr).group(1))
    snake = re.match(r"pub (?:r#)?(\w+):", decl).group(1)
    first = doc[0].split(" ")[0] if doc else ""
    rust_type = decl.split(":", 1)[1]
    m = re.match(r'btree_map = "string, (\w+)"', attr)
    if m:
        value = m.group(1)
        ty = message_type(rust_type, module) if value == "message" else value
        return (tag, snake, "map", ty, first)
    kind = attr.split(",")[0].split(" ")[0]
    label = "rep" if "repeated" in attr else "opt"
    if kind == "message":
        return (tag, snake, label, message_type(rust_type, module), first)
    if kind not in ("string", "int32", "int64", "bool", "bytes"):
        sys.exit(f"unsupported field type {attr!r} in {module}")
    return (tag, snake, label, kind, first)


def message_type(rust_type, module):
    """The (module, Name) a Rust field type refers to (its last generic argument)."""
    inner = rust_type.rstrip(",").strip()
    while "<" in inner:
        inner = inner[inner.index("<") + 1 : inner.rindex(">")]
        if "," in inner.rstrip(","):
            inner = inner.rstrip(",").split(",")[-1].strip()
    parts = inner.split("::")
    mod = module.split("/")
    while parts[0] == "super":
        mod = mod[:-1]
        parts = parts[1:]
    return ("/".join(mod + parts[:-1]), parts[-1])


def openapi_names(openapi_dir):
    """{(module, norm(Struct)): (StructName, {norm(rust_field): jsonName})} of k8s-openapi."""
    root = os.path.join(openapi_dir, "src", OPENAPI_VERSION)
    out = {}
    for dirpath, _, files in os.walk(root):
        module = os.path.relpath(dirpath, root)
        for f in files:
            if f == "mod.rs" or not f.endswith(".rs"):
                continue
            text = open(os.path.join(dirpath, f)).read()
            m = re.search(r"pub struct (\w+)", text)
            if not m:
                continue
            names = {
                norm(rust): js
                for js, rust in re.findall(r'"([A-Za-z0-9$]+)" => Field::Key_(\w+),', text)
            }
            out[(module, norm(m.group(1)))] = (m.group(1), names)
    return out


def lower_camel(snake):
    head, *rest = snake.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def proto_name(module, name):
    return "k8s.io." + module.replace("/", ".") + "." + name


def main():
    pb_dir, openapi_dir = sources()
    json_names = openapi_names(openapi_dir)
    messages = {}
    kinds = []
    for dirpath, _, files in os.walk(os.path.join(pb_dir, "src")):
        if "mod.rs" not in files:
            continue
        module = os.path.relpath(dirpath, os.path.join(pb_dir, "src"))
        if module.split("/")[0] not in ("api", "apimachinery"):
            continue
        msgs, ks = parse_pb_module(os.path.join(dirpath, "mod.rs"), module)
        for name, fields in msgs.items():
            messages[(module, name)] = fields
        if module in GROUPS:
            kinds += [(api, kind, (module, name)) for api, kind, name in ks]
            # Each kind's list (`PodList`), the answer to a list in protobuf.
            kinds += [
                (api, kind + "List", (module, name + "List"))
                for api, kind, name in ks
                if name + "List" in msgs
            ]
    kinds += [(api, kind, (module, name)) for api, kind, module, name in EXTRA_KINDS]

    # Every message reachable from the kinds, in a stable order.
    wanted = []
    seen = set()
    todo = [k[2] for k in kinds]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        if key not in messages:
            sys.exit(f"message {key} not found in k8s-pb")
        seen.add(key)
        wanted.append(key)
        todo += [f[3] for f in messages[key] if isinstance(f[3], tuple)]
    wanted.sort()

    def display(key):
        named = json_names.get((key[0], norm(key[1])))
        return proto_name(key[0], named[0] if named else key[1])

    # Go structs embedded with `json:",inline"` (a Probe's ProbeHandler, a Volume's
    # VolumeSource) are a message field in protobuf and flat in JSON: a message field whose
    # name k8s-openapi's struct lacks while it has the fields of the field's message. The
    # embedded message's fields take their JSON names from the outer struct.
    inline_fields = {}
    inlined_in = {}
    for key in wanted:
        named = json_names.get((key[0], norm(key[1])))
        if not named:
            continue
        for tag, snake, label, ty, _ in messages[key]:
            if not isinstance(ty, tuple) or label != "opt" or norm(snake) in named[1]:
                continue
            inner = [norm(f[1]) for f in messages[ty]]
            if inner and all(n in named[1] for n in inner):
                inline_fields.setdefault(key, set()).add((tag, snake))
                inlined_in[ty] = named

    counts = {"k8s-openapi": 0, "inline": 0, "doc comment": 0, "lowerCamelCase": 0}
    out = [
        "# The Kubernetes protobuf schema of the kinds the simulated API server decodes and encodes",
        f"# (generated by gen_schema.py from k8s-pb {K8S_PB} and k8s-openapi {K8S_OPENAPI}"
        f" {OPENAPI_VERSION}: do not edit).",
        "# Format: see gen_schema.py.",
    ]
    for api, kind, key in sorted(kinds):
        out.append(f"kind {api} {kind} {display(key)}")
    for key in wanted:
        out.append(f"message {display(key)}")
        named = json_names.get((key[0], norm(key[1]))) or inlined_in.get(key)
        for tag, snake, label, ty, first in sorted(messages[key]):
            if named and norm(snake) in named[1]:
                js = named[1][norm(snake)]
                counts["k8s-openapi"] += 1
            elif snake == "items" and key[1].endswith("List"):
                # k8s-openapi has no struct for a list (its `List<T>` is generic), and the
                # doc comment names the Go field ("Items is the list of …"): upstream's
                # JSON name is `items` on every list.
                js = "items"
                counts["lowerCamelCase"] += 1
            elif (tag, snake) in inline_fields.get(key, ()):
                js, label = "-", "inline"
                counts["inline"] += 1
            elif first and norm(first) == norm(snake):
                js = first
                counts["doc comment"] += 1
            else:
                js = lower_camel(snake)
                counts["lowerCamelCase"] += 1
            ty = display(ty) if isinstance(ty, tuple) else ty
            out.append(f"{tag} {js} {label} {ty}")
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    print(
        f"{OUT}: {len(kinds)} kinds, {len(wanted)} messages; field names from "
        + ", ".join(f"{k}: {v}" for k, v in counts.items())
    )


if __name__ == "__main__":
    main()
